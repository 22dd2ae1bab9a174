package fetch

import (
	"errors"

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

// MsgBlock `[1, eb_body]` carries an EB body: the bare CBOR map itself, as
// hashed, not wrapped in a byte string.
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
	Txs     [][]byte
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

// Validate rejects a body that is not a CBOR map; the client checks the
// rest (hash, size, DecodeEBBody) against its request.
func (m *MsgBlock) Validate() error {
	if len(m.Body) == 0 || m.Body[0]>>5 != majorMap {
		return errors.New("block message: the EB body is not a map")
	}
	return nil
}

// Validate rejects a request for no txs.
func (m *MsgBlockTxsRequest) Validate() error {
	if len(m.Bitmaps) == 0 {
		return errors.New("block txs request: empty bitmaps")
	}
	return nil
}

// Validate rejects a reply whose tx count differs from its bitmaps'.
func (m *MsgBlockTxs) Validate() error {
	if len(m.Txs) != m.Bitmaps.Count() {
		return errors.New("block txs: tx count differs from the bitmaps")
	}
	return nil
}

var (
	_ protocol.Validator = (*MsgBlock)(nil)
	_ protocol.Validator = (*MsgBlockTxsRequest)(nil)
	_ protocol.Validator = (*MsgBlockTxs)(nil)
)
