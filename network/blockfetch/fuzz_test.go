package blockfetch_test

import (
	"bytes"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// FuzzDecode: any bytes decode to a block-fetch message or fail with
// ErrMalformed, and a decoded message's encoding is stable.
func FuzzDecode(f *testing.F) {
	spec := blockfetch.Spec()
	blocks := chaintest.NewForger(1).Extend(nil, 2, "seed")
	for _, m := range []protocol.Message{
		&blockfetch.MsgRequestRange{From: blocks[0].Point(), To: blocks[1].Point()},
		&blockfetch.MsgClientDone{},
		&blockfetch.MsgStartBatch{},
		&blockfetch.MsgNoBlocks{},
		&blockfetch.MsgBlock{Block: blocks[1]},
		&blockfetch.MsgBlock{Block: chaintest.Tampered(blocks[0])},
		&blockfetch.MsgBatchDone{},
	} {
		data, err := protocol.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0x82, 0x04, 0xf6})             // block message with a null block
	f.Add([]byte{0x83, 0x00, 0x80, 0x82, 0x01}) // truncated point
	f.Fuzz(func(t *testing.T, data []byte) {
		m := protocoltest.DecodeStable(t, spec, data)
		if m == nil {
			return
		}
		if b, ok := m.(*blockfetch.MsgBlock); ok && !bytes.Equal(b.Block.Bytes(), mustBlockItem(t, data)) {
			t.Fatal("a decoded block does not keep its original bytes")
		}
	})
}

// mustBlockItem returns the raw second item of a block message.
func mustBlockItem(t *testing.T, data []byte) []byte {
	var items []block.RawCBOR
	if err := block.Unmarshal(data, &items); err != nil || len(items) != 2 {
		t.Fatalf("block message items: %v", err)
	}
	return items[1]
}
