package blockfetch

import (
	"time"

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

// Spec declares block fetch. The server may wait for requests forever; the
// client waits a minute for each answer and each block.
func Spec() *protocol.Spec {
	return &protocol.Spec{
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
			},
			StBusy: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagStartBatch: StStreaming,
					TagNoBlocks:   StIdle,
				},
				MaxSize: maxControlSize,
				Timeout: time.Minute,
			},
			StStreaming: {
				Agency: protocol.Server,
				Next: map[uint64]protocol.State{
					TagBlock:     StStreaming,
					TagBatchDone: StIdle,
				},
				MaxSize: maxBlockSize,
				Timeout: time.Minute,
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
