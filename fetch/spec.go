package fetch

import (
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// States of LeiosFetch.
const (
	StIdle     protocol.State = "Idle"     // client: request or done
	StBlock    protocol.State = "Block"    // server: the body
	StBlockTxs protocol.State = "BlockTxs" // server: the txs
	StDone     protocol.State = "Done"
)

// MaxPipelined is how many requests a client may send ahead of the reply
// to its first one; a client has at most MaxPipelined+1 outstanding.
const MaxPipelined = 31

// Size limits and timeouts.
const (
	// maxRequestSize bounds a request: a point and up to 4,096 windows, far
	// more than any EB within the limits needs (218 windows for 13,888 txs).
	maxRequestSize = 64 << 10
	// replyOverhead covers a reply's framing beyond the body or the txs:
	// the tag, the point, the bitmaps and a byte-string head per tx.
	replyOverhead = 256 << 10
	// replyTimeout bounds the wait for one reply: a whole 12 MB closure at
	// 2 Mbit/s, and the replies queued ahead of it.
	replyTimeout = 60 * time.Second
)

// Spec declares LeiosFetch for EBs within limits. The server waits for
// requests as long as the stream lives; the client waits replyTimeout for
// each reply. Requests are pipelined (MaxPipelined).
func Spec(limits block.EBLimits) *protocol.Spec {
	return &protocol.Spec{
		Name:    "fetch",
		Initial: StIdle,
		States: map[protocol.State]protocol.StateSpec{
			StIdle: {
				Agency: protocol.Client,
				Next: map[uint64]protocol.State{
					TagBlockRequest:    StBlock,
					TagBlockTxsRequest: StBlockTxs,
					TagDone:            StDone,
				},
				MaxSize: maxRequestSize,
			},
			StBlock: {
				Agency:  protocol.Server,
				Next:    map[uint64]protocol.State{TagBlock: StIdle},
				MaxSize: limits.MaxBodyBytes + replyOverhead,
				Timeout: replyTimeout,
			},
			StBlockTxs: {
				Agency:  protocol.Server,
				Next:    map[uint64]protocol.State{TagBlockTxs: StIdle},
				MaxSize: limits.MaxClosureBytes + replyOverhead,
				Timeout: replyTimeout,
			},
			StDone: {Agency: protocol.Nobody},
		},
		Messages: map[uint64]func() protocol.Message{
			TagBlockRequest:    func() protocol.Message { return new(MsgBlockRequest) },
			TagBlock:           func() protocol.Message { return new(MsgBlock) },
			TagBlockTxsRequest: func() protocol.Message { return new(MsgBlockTxsRequest) },
			TagBlockTxs:        func() protocol.Message { return new(MsgBlockTxs) },
			TagDone:            func() protocol.Message { return new(MsgDone) },
		},
		MaxPipelined: MaxPipelined,
		// Bitmaps are an indefinite-length map; Bitmaps.UnmarshalCBOR
		// checks their form, and every other item decodes strictly.
		IndefiniteLengths: true,
	}
}
