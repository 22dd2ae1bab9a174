package chainsync

import (
	"github.com/leiosnode/leiosnode/internal/cpuwork"
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

// Spec declares chain sync. Its timeouts follow the Cardano node's, and no
// honest peer runs into one:
//   - Idle (IdleWait, 3673 s, the server waits): the client asks again as
//     soon as it has handled an answer; it only pauses to fetch and add
//     bodies, or to wait out a fork deeper than k
//     (ServiceOptions.ForkRecheck, a minute, before it asks again).
//   - CanAwait and Intersect (ShortWait, 10 s, the client waits): answered
//     at once from the server's chain, with an update or await reply.
//   - MustReply (HeldWait, 269 s, the client waits): the server holds the
//     request until its chain moves, which may take long on a quiet or
//     partitioned network; so it answers within KeepAlive (90 s) anyway,
//     with a roll backward to the point the client already has, which
//     changes nothing but the state. The Cardano node draws this timeout
//     between 135 and 269 s and has no keep-alive; a timeout here is a
//     stuck server.
func Spec() *protocol.Spec {
	return &protocol.Spec{
		Work:    cpuwork.Chain,
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
				Timeout: protocol.IdleWait,
			},
			StCanAwait: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagRollForward:  StIdle,
					TagRollBackward: StIdle,
					TagAwaitReply:   StMustReply,
				},
				MaxSize: maxMessageSize,
				Timeout: protocol.ShortWait,
			},
			StMustReply: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagRollForward:  StIdle,
					TagRollBackward: StIdle,
				},
				MaxSize: maxMessageSize,
				Timeout: protocol.HeldWait,
			},
			StIntersect: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagIntersectFound:    StIdle,
					TagIntersectNotFound: StIdle,
				},
				MaxSize: maxMessageSize,
				Timeout: protocol.ShortWait,
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
