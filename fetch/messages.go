package fetch

import (
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Message tags, as in the Haskell leios-prototype's LeiosFetch codec.
const (
	TagBlockRequest    uint64 = 0
	TagBlock           uint64 = 1
	TagBlockTxsRequest uint64 = 2
	TagBlockTxs        uint64 = 3
	TagDone            uint64 = 9
)

// MsgBlockRequest `[0, point]` asks for the EB body at Point.
type MsgBlockRequest struct {
	_     struct{} `cbor:",toarray"`
	Point block.Point
}

// MsgBlock `[1, eb_body]` carries an EB body: the CBOR item itself, as
// hashed, not wrapped in a byte string — the bare map in the prototype's
// encoding, the map in a one-element array in the CIP's (the network's
// genesis says which, block.EBLimits).
type MsgBlock struct {
	_    struct{} `cbor:",toarray"`
	Body block.RawCBOR
}

// MsgBlockTxsRequest `[2, point, bitmaps]` asks for the txs of the EB at
// Point that Bitmaps selects.
type MsgBlockTxsRequest struct {
	_       struct{} `cbor:",toarray"`
	Point   block.Point
	Bitmaps Bitmaps
}

// MsgBlockTxs `[3, point, bitmaps, [* bytes]]` answers a txs request: the
// request's point and bitmaps, then the selected txs in ascending offset
// order, each the serialized tx as a byte string.
type MsgBlockTxs struct {
	_       struct{} `cbor:",toarray"`
	Point   block.Point
	Bitmaps Bitmaps
	Txs     TxList
}

// TxList is the txs of a MsgBlockTxs: a definite-length array of
// definite-length byte strings, untagged (the spec forbids tags), as the
// Haskell codec reads them.
type TxList [][]byte

// UnmarshalCBOR decodes strictly (block.Unmarshal), refusing an
// indefinite-length list or tx, which the engine reports as
// protocol.ErrIndefiniteLength: the spec allows indefinite lengths for the
// bitmaps alone.
func (l *TxList) UnmarshalCBOR(data []byte) error {
	var txs [][]byte
	if err := block.Unmarshal(data, &txs); err != nil {
		return fmt.Errorf("txs: %w", err)
	}
	*l = txs
	return nil
}

// MsgDone `[9]` ends the protocol.
type MsgDone struct {
	_ struct{} `cbor:",toarray"`
}

func (*MsgBlockRequest) Tag() uint64    { return TagBlockRequest }
func (*MsgBlock) Tag() uint64           { return TagBlock }
func (*MsgBlockTxsRequest) Tag() uint64 { return TagBlockTxsRequest }
func (*MsgBlockTxs) Tag() uint64        { return TagBlockTxs }
func (*MsgDone) Tag() uint64            { return TagDone }

// errOriginPoint: a point that names no EB. The Haskell codec's LeiosPoint
// is always [slot, hash]; it has no origin form.
var errOriginPoint = errors.New("the origin point, which names no EB")

// Validate rejects the origin.
func (m *MsgBlockRequest) Validate() error {
	if m.Point.IsOrigin() {
		return fmt.Errorf("block request: %w", errOriginPoint)
	}
	return nil
}

// Validate rejects a body that is neither a map (the prototype's EB body)
// nor a one-element array around a map (the CIP's), or is not
// definite-length (protocol.ErrIndefiniteLength); the client checks the
// rest — the network's encoding, hash, size: DecodeEBBody — against its
// request.
func (m *MsgBlock) Validate() error {
	b := m.Body
	if len(b) > 1 && b[0] == cipEBBodyHead {
		b = b[1:]
	}
	if len(b) == 0 || b[0]>>5 != majorMap {
		return errors.New("block message: the EB body is neither a map nor a one-element array around one")
	}
	if err := protocol.Definite(m.Body); err != nil {
		return fmt.Errorf("block message: the EB body: %w", err)
	}
	return nil
}

// Validate rejects the origin and a request for no txs.
func (m *MsgBlockTxsRequest) Validate() error {
	switch {
	case m.Point.IsOrigin():
		return fmt.Errorf("block txs request: %w", errOriginPoint)
	case len(m.Bitmaps) == 0:
		return errors.New("block txs request: empty bitmaps")
	}
	return nil
}

// Validate rejects the origin and a reply whose tx count differs from its
// bitmaps'.
func (m *MsgBlockTxs) Validate() error {
	switch {
	case m.Point.IsOrigin():
		return fmt.Errorf("block txs: %w", errOriginPoint)
	case len(m.Txs) != m.Bitmaps.Count():
		return errors.New("block txs: tx count differs from the bitmaps")
	}
	return nil
}

var (
	_ protocol.Validator = (*MsgBlockRequest)(nil)
	_ protocol.Validator = (*MsgBlock)(nil)
	_ protocol.Validator = (*MsgBlockTxsRequest)(nil)
	_ protocol.Validator = (*MsgBlockTxs)(nil)
)
