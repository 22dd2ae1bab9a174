package txsubmission

import (
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// States of tx submission.
const (
	StInit  protocol.State = "Init"
	StIdle  protocol.State = "Idle"
	StTxIds protocol.State = "TxIds"
	StTxs   protocol.State = "Txs"
	StDone  protocol.State = "Done"
)

// Size limits, as the Cardano node's: control messages and id lists are
// small; a reply carrying txs is bounded like a block.
const (
	maxSmallMessage = 0xffff
	maxTxsMessage   = 2_500_000
)

// ShortWait is how long the server waits for a reply that must come at
// once: the txs it asked for, and the ids of a non-blocking request
// (Cardano's shortWait).
const ShortWait = protocol.ShortWait

// Spec declares tx submission. The Cardano node waits for ever for the
// init, for the server's next request and for the reply to a blocking
// request; here every wait is bounded, and no honest peer runs into one:
//   - Init (ShortWait, the server waits): the client sends it as soon as
//     it has opened the stream.
//   - Idle (IdleWait, 3673 s, the client waits): the server asks again as
//     soon as it has added the last reply's txs to its mempool, and gives
//     up waiting for room after Options.MaxAddWait (10 minutes).
//   - TxIds (HeldWait, 269 s, the server waits): a blocking request is
//     answered when the client has a new tx, which may take long on a
//     quiet network; the client answers within Options.KeepAlive (90 s)
//     anyway, with done, and opens a new stream. A non-blocking request is
//     due within ShortWait.
//   - Txs (ShortWait, the server waits): the txs asked for are at hand.
//
// One timeout the engine cannot declare: the reply to a non-blocking
// request is due within ShortWait, but blocking and non-blocking requests
// lead to the same state (the engine keys transitions by tag, and the flag
// is in the payload), so the server enforces it itself. For the same
// reason the server checks that done answers only a blocking request.
func Spec() *protocol.Spec {
	return &protocol.Spec{
		Work:    cpuwork.TxSubmission,
		Name:    "txsubmission",
		Initial: StInit,
		States: map[protocol.State]protocol.StateSpec{
			StInit: {
				Agency:  protocol.Client,
				Next:    map[uint64]protocol.State{TagInit: StIdle},
				MaxSize: maxSmallMessage,
				Timeout: ShortWait,
			},
			StIdle: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagRequestTxIds: StTxIds,
					TagRequestTxs:   StTxs,
				},
				MaxSize: maxSmallMessage,
				Timeout: protocol.IdleWait,
			},
			StTxIds: {
				Agency: protocol.Client,
				Next: map[uint64]protocol.State{
					TagReplyTxIds: StIdle,
					TagDone:       StDone,
				},
				MaxSize: maxSmallMessage,
				Timeout: protocol.HeldWait,
			},
			StTxs: {
				Agency:  protocol.Client,
				Next:    map[uint64]protocol.State{TagReplyTxs: StIdle},
				MaxSize: maxTxsMessage,
				Timeout: ShortWait,
			},
			StDone: {Agency: protocol.Nobody},
		},
		Messages: map[uint64]func() protocol.Message{
			TagInit:         func() protocol.Message { return new(MsgInit) },
			TagRequestTxIds: func() protocol.Message { return new(MsgRequestTxIds) },
			TagReplyTxIds:   func() protocol.Message { return new(MsgReplyTxIds) },
			TagRequestTxs:   func() protocol.Message { return new(MsgRequestTxs) },
			TagReplyTxs:     func() protocol.Message { return new(MsgReplyTxs) },
			TagDone:         func() protocol.Message { return new(MsgDone) },
		},
	}
}
