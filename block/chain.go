package block

import "fmt"

// Tip is the end of a chain: its last point and that block's number.
// The tip of the empty chain is Origin with BlockNumber 0; the first block
// after origin has BlockNumber 1, so a longer chain has a larger number.
type Tip struct {
	_           struct{} `cbor:",toarray"`
	Point       Point
	BlockNumber uint64
}

func (t Tip) String() string {
	if t.Point.IsOrigin() {
		return "origin"
	}
	return fmt.Sprintf("#%d %s", t.BlockNumber, t.Point)
}

// UpdateKind says whether a ChainUpdate extends or shortens a chain.
type UpdateKind uint8

const (
	RollForward UpdateKind = iota + 1
	RollBackward
)

// ChainUpdate is one step of a follower of the selected chain, as chain sync
// relays it: roll forward to Header, or roll backward to Point.
type ChainUpdate struct {
	Kind   UpdateKind
	Header *Header // RollForward
	Point  Point   // RollBackward: the new end of the chain
}
