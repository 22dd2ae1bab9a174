package chainsync

import (
	"errors"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Message tags, as in Cardano's chain-sync codec.
const (
	TagRequestNext       uint64 = 0
	TagAwaitReply        uint64 = 1
	TagRollForward       uint64 = 2
	TagRollBackward      uint64 = 3
	TagFindIntersect     uint64 = 4
	TagIntersectFound    uint64 = 5
	TagIntersectNotFound uint64 = 6
	TagDone              uint64 = 7
)

// MsgRequestNext `[0]` asks for the next update.
type MsgRequestNext struct {
	_ struct{} `cbor:",toarray"`
}

// MsgAwaitReply `[1]`: the client is at the tip; the update will follow.
type MsgAwaitReply struct {
	_ struct{} `cbor:",toarray"`
}

// MsgRollForward `[2, header, tip]` extends the client's view by a header.
type MsgRollForward struct {
	_      struct{} `cbor:",toarray"`
	Header *block.Header
	Tip    block.Tip
}

// MsgRollBackward `[3, point, tip]` rolls the client's view back to Point.
type MsgRollBackward struct {
	_     struct{} `cbor:",toarray"`
	Point block.Point
	Tip   block.Tip
}

// MsgFindIntersect `[4, [* point]]` asks for the first of Points the server
// has on its chain.
type MsgFindIntersect struct {
	_      struct{} `cbor:",toarray"`
	Points []block.Point
}

// MsgIntersectFound `[5, point, tip]`.
type MsgIntersectFound struct {
	_     struct{} `cbor:",toarray"`
	Point block.Point
	Tip   block.Tip
}

// MsgIntersectNotFound `[6, tip]`.
type MsgIntersectNotFound struct {
	_   struct{} `cbor:",toarray"`
	Tip block.Tip
}

// MsgDone `[7]` ends the protocol.
type MsgDone struct {
	_ struct{} `cbor:",toarray"`
}

func (*MsgRequestNext) Tag() uint64       { return TagRequestNext }
func (*MsgAwaitReply) Tag() uint64        { return TagAwaitReply }
func (*MsgRollForward) Tag() uint64       { return TagRollForward }
func (*MsgRollBackward) Tag() uint64      { return TagRollBackward }
func (*MsgFindIntersect) Tag() uint64     { return TagFindIntersect }
func (*MsgIntersectFound) Tag() uint64    { return TagIntersectFound }
func (*MsgIntersectNotFound) Tag() uint64 { return TagIntersectNotFound }
func (*MsgDone) Tag() uint64              { return TagDone }

// Validate rejects a null header, which CBOR decoding would let through.
func (m *MsgRollForward) Validate() error {
	if m.Header == nil {
		return errors.New("roll forward without a header")
	}
	return nil
}

var _ protocol.Validator = (*MsgRollForward)(nil)
