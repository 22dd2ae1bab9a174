package fetch

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
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

// Size limits.
const (
	// maxRequestSize bounds a request: a point and up to 4,096 windows, far
	// more than any EB within the limits needs (218 windows for 13,888 txs).
	maxRequestSize = 64 << 10
	// replyOverhead covers a reply's framing beyond the body or the txs:
	// the tag, the point, the bitmaps and a byte-string head per tx.
	replyOverhead = 256 << 10
)

// Spec declares LeiosFetch for EBs within limits. Requests are pipelined
// (MaxPipelined). No honest peer runs into a timeout:
//   - Idle (HeldWait, 269 s, the server waits): a client keeps its stream
//     only while it has something to ask; one that has asked nothing for
//     Options.KeepAlive (90 s) says done, and opens a new stream with its
//     next request.
//   - Block and BlockTxs (LongWait, 60 s, the client waits for each
//     reply): a whole 12 MB closure at 2 Mbit/s, with the replies queued
//     ahead of it.
func Spec(limits block.EBLimits) *protocol.Spec {
	return &protocol.Spec{
		Work:    cpuwork.Fetch,
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
				Timeout: protocol.HeldWait,
			},
			StBlock: {
				Agency:  protocol.Server,
				Next:    map[uint64]protocol.State{TagBlock: StIdle},
				MaxSize: limits.MaxBodyBytes + replyOverhead,
				Timeout: protocol.LongWait,
			},
			StBlockTxs: {
				Agency:  protocol.Server,
				Next:    map[uint64]protocol.State{TagBlockTxs: StIdle},
				MaxSize: limits.MaxClosureBytes + replyOverhead,
				Timeout: protocol.LongWait,
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
		// As the Haskell codec: the bitmaps are an indefinite-length map
		// (Bitmaps.UnmarshalCBOR reads that form only); every other item
		// is definite (Point, TxList, MsgBlock.Validate), and no item is
		// tagged.
		IndefiniteLengths: true,
		ForbidTags:        true,
		MinimalEncoding:   true, // integers and lengths in their shortest form
	}
}

// StMultiBlock is /leios/fetch/2's state in which the server streams the
// EBs of a multi-block request.
const StMultiBlock protocol.State = "MultiBlock"

// Spec2 declares /leios/fetch/2, CIP-0164's LeiosFetch: Idle, then either
// MultiBlock (one MsgLeiosBlock per EB asked for, then
// MsgLeiosNoMoreBlocks) or BlockTxs. Pipelining and timeouts as Spec's:
// each EB of a multi-block answer must come within LongWait of the one
// before. No item is indefinite-length (the engine's default) or tagged.
func Spec2(limits block.EBLimits) *protocol.Spec {
	return &protocol.Spec{
		Work:    cpuwork.Fetch,
		Name:    "fetch",
		Version: 2,
		Initial: StIdle,
		States: map[protocol.State]protocol.StateSpec{
			StIdle: {
				Agency: protocol.Client,
				Next: map[uint64]protocol.State{
					TagMultiBlockRequest: StMultiBlock,
					TagTxsRequest2:       StBlockTxs,
					TagDone2:             StDone,
				},
				MaxSize: maxRequestSize,
				Timeout: protocol.HeldWait,
			},
			StMultiBlock: {
				Agency:  protocol.Server,
				Next:    map[uint64]protocol.State{TagMultiBlock: StMultiBlock, TagNoMoreBlocks: StIdle},
				MaxSize: limits.MaxBodyBytes + limits.MaxClosureBytes + replyOverhead,
				Timeout: protocol.LongWait,
			},
			StBlockTxs: {
				Agency:  protocol.Server,
				Next:    map[uint64]protocol.State{TagTxs2: StIdle},
				MaxSize: max(limits.MaxBodyBytes, limits.MaxClosureBytes) + replyOverhead,
				Timeout: protocol.LongWait,
			},
			StDone: {Agency: protocol.Nobody},
		},
		Messages: map[uint64]func() protocol.Message{
			TagMultiBlockRequest: func() protocol.Message { return new(MsgMultiBlockRequest) },
			TagMultiBlock:        func() protocol.Message { return new(MsgMultiBlock) },
			TagNoMoreBlocks:      func() protocol.Message { return new(MsgNoMoreBlocks) },
			TagTxsRequest2:       func() protocol.Message { return new(MsgTxsRequest2) },
			TagTxs2:              func() protocol.Message { return new(MsgTxs2) },
			TagDone2:             func() protocol.Message { return new(MsgDone2) },
		},
		MaxPipelined:    MaxPipelined,
		ForbidTags:      true,
		MinimalEncoding: true, // as the CIP's CDDL
	}
}
