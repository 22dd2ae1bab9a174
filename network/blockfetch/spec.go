package blockfetch

import (
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// States of block fetch.
const (
	StIdle      protocol.State = "Idle"
	StBusy      protocol.State = "Busy"
	StStreaming protocol.State = "Streaming"
	StDone      protocol.State = "Done"
)

// Size limits: requests and control messages are tiny; a block message is
// bounded like the Cardano node's streaming state (2.5 MB).
const (
	maxControlSize = 64 << 10
	maxBlockSize   = 2_500_000
)

// Spec declares block fetch. A client's stream lives for one range
// (FetchRange): it asks at once and says done as soon as the batch is in,
// so unlike the Cardano node's, whose server waits for the next request
// for ever, the server here waits ShortWait (10 s) in Idle. The client
// waits LongWait (60 s, the Cardano node's) for the start of a batch and
// for each block.
func Spec() *protocol.Spec {
	return &protocol.Spec{
		Work:    cpuwork.Chain,
		Name:    "blockfetch",
		Initial: StIdle,
		States: map[protocol.State]protocol.StateSpec{
			StIdle: {
				Agency: protocol.Client,
				Next: map[uint64]protocol.State{
					TagRequestRange: StBusy,
					TagClientDone:   StDone,
				},
				MaxSize: maxControlSize,
				Timeout: protocol.ShortWait,
			},
			StBusy: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagStartBatch: StStreaming,
					TagNoBlocks:   StIdle,
				},
				MaxSize: maxControlSize,
				Timeout: protocol.LongWait,
			},
			StStreaming: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagBlock:     StStreaming,
					TagBatchDone: StIdle,
				},
				MaxSize: maxBlockSize,
				Timeout: protocol.LongWait,
			},
			StDone: {Agency: protocol.Nobody},
		},
		Messages: map[uint64]func() protocol.Message{
			TagRequestRange: func() protocol.Message { return new(MsgRequestRange) },
			TagClientDone:   func() protocol.Message { return new(MsgClientDone) },
			TagStartBatch:   func() protocol.Message { return new(MsgStartBatch) },
			TagNoBlocks:     func() protocol.Message { return new(MsgNoBlocks) },
			TagBlock:        func() protocol.Message { return new(MsgBlock) },
			TagBatchDone:    func() protocol.Message { return new(MsgBatchDone) },
		},
	}
}
