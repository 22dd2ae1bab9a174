package notify

import (
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// States of LeiosNotify.
const (
	StIdle protocol.State = "Idle"
	StBusy protocol.State = "Busy"
	StDone protocol.State = "Done"
)

// MaxInFlight is how many request next a client keeps outstanding.
const MaxInFlight = 100

// Size limits: a request is two bytes; a notification is at most a header
// (under a kilobyte) or a vote batch, bounded like the Haskell codec's
// smallByteLimit.
const (
	maxRequestSize      = 64
	maxNotificationSize = 65_535
)

// idleTimeout bounds how long a server waits for the next request, as chain
// sync's: a client always keeps requests outstanding, so a long silence
// means a stuck peer.
const idleTimeout = 3673 * time.Second

// Spec declares LeiosNotify. The client may pipeline MaxInFlight requests
// (one applied, the rest sent ahead); the server may hold a request for ever,
// since it answers only when there is news.
func Spec() *protocol.Spec {
	return &protocol.Spec{
		Name:    "notify",
		Initial: StIdle,
		States: map[protocol.State]protocol.StateSpec{
			StIdle: {
				Agency: protocol.Client,
				Next: map[uint64]protocol.State{
					TagRequestNext: StBusy,
					TagDone:        StDone,
				},
				MaxSize: maxRequestSize,
				Timeout: idleTimeout,
			},
			StBusy: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagBlockAnnouncement: StIdle,
					TagBlockOffer:        StIdle,
					TagBlockTxsOffer:     StIdle,
					TagVotes:             StIdle,
				},
				MaxSize: maxNotificationSize,
			},
			StDone: {Agency: protocol.Nobody},
		},
		Messages: map[uint64]func() protocol.Message{
			TagRequestNext:       func() protocol.Message { return new(MsgRequestNext) },
			TagBlockAnnouncement: func() protocol.Message { return new(MsgBlockAnnouncement) },
			TagBlockOffer:        func() protocol.Message { return new(MsgBlockOffer) },
			TagBlockTxsOffer:     func() protocol.Message { return new(MsgBlockTxsOffer) },
			TagVotes:             func() protocol.Message { return new(MsgVotes) },
			TagDone:              func() protocol.Message { return new(MsgDone) },
		},
		MaxPipelined: MaxInFlight - 1,
	}
}
