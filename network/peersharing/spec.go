package peersharing

import (
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// States of peer sharing, as Cardano's.
const (
	StIdle protocol.State = "Idle"
	StBusy protocol.State = "Busy"
	StDone protocol.State = "Done"
)

// Size limits: a request is a few bytes; a reply holds at most MaxAmount
// peers of MaxAddrsPerPeer addresses of maxAddrLen bytes each (about
// 35 kB).
const (
	maxRequestSize = 64
	maxReplySize   = 64 << 10
)

// Spec declares peer sharing. Both waits are ShortWait (10 s): a server
// answers from what it holds at once, and the client asks once and says
// done as soon as the answer is in.
func Spec() *protocol.Spec {
	return &protocol.Spec{
		Work:    cpuwork.Network,
		Name:    "peersharing",
		Initial: StIdle,
		States: map[protocol.State]protocol.StateSpec{
			StIdle: {
				Agency: protocol.Client,
				Next: map[uint64]protocol.State{
					TagShareRequest: StBusy,
					TagDone:         StDone,
				},
				MaxSize: maxRequestSize,
				Timeout: protocol.ShortWait,
			},
			StBusy: {
				Agency:  protocol.Server,
				Next:    map[uint64]protocol.State{TagSharePeers: StIdle},
				MaxSize: maxReplySize,
				Timeout: protocol.ShortWait,
			},
			StDone: {Agency: protocol.Nobody},
		},
		Messages: map[uint64]func() protocol.Message{
			TagShareRequest: func() protocol.Message { return new(MsgShareRequest) },
			TagSharePeers:   func() protocol.Message { return new(MsgSharePeers) },
			TagDone:         func() protocol.Message { return new(MsgDone) },
		},
	}
}
