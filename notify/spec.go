package notify

import (
	"github.com/leiosnode/leiosnode/internal/cpuwork"
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

// Spec declares LeiosNotify. The client may pipeline MaxInFlight requests
// (one applied, the rest sent ahead). No honest peer runs into a timeout:
//   - Idle (IdleWait, 3673 s, the server waits), as chain sync's: the
//     client asks again as soon as it has handled a notification, and only
//     the node's handlers can hold it up.
//   - Busy (HeldWait, 269 s, the client waits): the server holds requests
//     until it has news, which may take long on a quiet network; a client
//     that has heard nothing for Options.KeepAlive (90 s) closes its stream
//     and opens a new one, which the server starts with its current state
//     (a few notifications per volatile EB), so an honest server is never
//     timed out.
func Spec() *protocol.Spec {
	return &protocol.Spec{
		Work:    cpuwork.Notify,
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
				Timeout: protocol.IdleWait,
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
				Timeout: protocol.HeldWait,
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
		// As the Haskell codec writes them: every item definite-length (the
		// engine's default), none tagged, integers and lengths in their
		// shortest form.
		ForbidTags:      true,
		MinimalEncoding: true,
	}
}
