package blockfetch

import (
	"errors"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Message tags, as in Cardano's block-fetch codec.
const (
	TagRequestRange uint64 = 0
	TagClientDone   uint64 = 1
	TagStartBatch   uint64 = 2
	TagNoBlocks     uint64 = 3
	TagBlock        uint64 = 4
	TagBatchDone    uint64 = 5
)

// MsgRequestRange `[0, from, to]` asks for the blocks from..to, inclusive.
type MsgRequestRange struct {
	_    struct{} `cbor:",toarray"`
	From block.Point
	To   block.Point
}

// MsgClientDone `[1]` ends the protocol.
type MsgClientDone struct {
	_ struct{} `cbor:",toarray"`
}

// MsgStartBatch `[2]`: the blocks follow.
type MsgStartBatch struct {
	_ struct{} `cbor:",toarray"`
}

// MsgNoBlocks `[3]`: the server does not have the range.
type MsgNoBlocks struct {
	_ struct{} `cbor:",toarray"`
}

// MsgBlock `[4, block]` carries one block, its original bytes as an item.
type MsgBlock struct {
	_     struct{} `cbor:",toarray"`
	Block *block.Block
}

// MsgBatchDone `[5]` ends a batch.
type MsgBatchDone struct {
	_ struct{} `cbor:",toarray"`
}

func (*MsgRequestRange) Tag() uint64 { return TagRequestRange }
func (*MsgClientDone) Tag() uint64   { return TagClientDone }
func (*MsgStartBatch) Tag() uint64   { return TagStartBatch }
func (*MsgNoBlocks) Tag() uint64     { return TagNoBlocks }
func (*MsgBlock) Tag() uint64        { return TagBlock }
func (*MsgBatchDone) Tag() uint64    { return TagBatchDone }

// Validate rejects a null block, which CBOR decoding would let through.
func (m *MsgBlock) Validate() error {
	if m.Block == nil {
		return errors.New("block message without a block")
	}
	return nil
}

var _ protocol.Validator = (*MsgBlock)(nil)
