package block

import "fmt"

// Point names a block by slot and hash: `[slot, bytes32 hash]`. For ranking
// blocks the hash is the block hash; for Leios EBs it is the EB hash and the
// slot is that of the announcing RB.
type Point struct {
	_    struct{} `cbor:",toarray"`
	Slot uint64
	Hash Hash
}

// Origin is the point before the first block; it has slot 0 and a zero hash
// and is encoded as the empty array.
var Origin = Point{}

// IsOrigin reports whether p is the origin.
func (p Point) IsOrigin() bool { return p.Slot == 0 && p.Hash.IsZero() }

func (p Point) String() string {
	if p.IsOrigin() {
		return "origin"
	}
	return fmt.Sprintf("%d@%s", p.Slot, p.Hash.Short())
}

// MarshalCBOR encodes the origin as `[]` and any other point as `[slot, hash]`,
// as Cardano chain-sync does.
func (p Point) MarshalCBOR() ([]byte, error) {
	if p.IsOrigin() {
		return []byte{0x80}, nil
	}
	return encMode.Marshal([]any{p.Slot, p.Hash})
}

func (p *Point) UnmarshalCBOR(data []byte) error {
	var raw []RawCBOR
	if err := decMode.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("point: %w", err)
	}
	switch len(raw) {
	case 0:
		*p = Origin
		return nil
	case 2:
		var q Point
		if err := decMode.Unmarshal(raw[0], &q.Slot); err != nil {
			return fmt.Errorf("point slot: %w", err)
		}
		if err := decMode.Unmarshal(raw[1], &q.Hash); err != nil {
			return fmt.Errorf("point hash: %w", err)
		}
		if q.IsOrigin() {
			return fmt.Errorf("point: origin must be encoded as []")
		}
		*p = q
		return nil
	default:
		return fmt.Errorf("point: want 0 or 2 elements, got %d", len(raw))
	}
}
