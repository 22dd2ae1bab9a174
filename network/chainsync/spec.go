package chainsync

import (
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// States of chain sync.
const (
	StIdle      protocol.State = "Idle"
	StCanAwait  protocol.State = "CanAwait"
	StMustReply protocol.State = "MustReply"
	StIntersect protocol.State = "Intersect"
	StDone      protocol.State = "Done"
)

// maxMessageSize bounds every chain-sync message: a header is well under a
// kilobyte, and a find intersect of a few dozen points far below this.
const maxMessageSize = 64 << 10

// Spec declares chain sync. Timeouts follow the Cardano node's: the server
// waits up to an hour for the next request; a client waits 10 s for an
// answer, except after await reply, when the answer comes when the chain
// moves.
func Spec() *protocol.Spec {
	return &protocol.Spec{
		Name:    "chainsync",
		Initial: StIdle,
		States: map[protocol.State]protocol.StateSpec{
			StIdle: {
				Agency: protocol.Client,
				Next: map[uint64]protocol.State{
					TagRequestNext:   StCanAwait,
					TagFindIntersect: StIntersect,
					TagDone:          StDone,
				},
				MaxSize: maxMessageSize,
				Timeout: 3673 * time.Second,
			},
			StCanAwait: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagRollForward:  StIdle,
					TagRollBackward: StIdle,
					TagAwaitReply:   StMustReply,
				},
				MaxSize: maxMessageSize,
				Timeout: 10 * time.Second,
			},
			StMustReply: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagRollForward:  StIdle,
					TagRollBackward: StIdle,
				},
				MaxSize: maxMessageSize,
			},
			StIntersect: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagIntersectFound:    StIdle,
					TagIntersectNotFound: StIdle,
				},
				MaxSize: maxMessageSize,
				Timeout: 10 * time.Second,
			},
			StDone: {Agency: protocol.Nobody},
		},
		Messages: map[uint64]func() protocol.Message{
			TagRequestNext:       func() protocol.Message { return new(MsgRequestNext) },
			TagAwaitReply:        func() protocol.Message { return new(MsgAwaitReply) },
			TagRollForward:       func() protocol.Message { return new(MsgRollForward) },
			TagRollBackward:      func() protocol.Message { return new(MsgRollBackward) },
			TagFindIntersect:     func() protocol.Message { return new(MsgFindIntersect) },
			TagIntersectFound:    func() protocol.Message { return new(MsgIntersectFound) },
			TagIntersectNotFound: func() protocol.Message { return new(MsgIntersectNotFound) },
			TagDone:              func() protocol.Message { return new(MsgDone) },
		},
	}
}
