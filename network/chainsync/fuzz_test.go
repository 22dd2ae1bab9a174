package chainsync_test

import (
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// FuzzDecode: any bytes decode to a chain-sync message or fail with
// ErrMalformed, and a decoded message re-encodes to bytes that decode to
// the same encoding again.
func FuzzDecode(f *testing.F) {
	spec := chainsync.Spec()
	blocks := chaintest.NewForger(1).Extend(nil, 2, "seed")
	h, p := blocks[1].Header, blocks[1].Point()
	tip := block.Tip{Point: p, BlockNumber: 2}
	for _, m := range []protocol.Message{
		&chainsync.MsgRequestNext{},
		&chainsync.MsgAwaitReply{},
		&chainsync.MsgRollForward{Header: h, Tip: tip},
		&chainsync.MsgRollBackward{Point: block.Origin, Tip: tip},
		&chainsync.MsgFindIntersect{Points: []block.Point{p, blocks[0].Point(), block.Origin}},
		&chainsync.MsgIntersectFound{Point: p, Tip: tip},
		&chainsync.MsgIntersectNotFound{Tip: block.Tip{Point: block.Origin}},
		&chainsync.MsgDone{},
	} {
		data, err := protocol.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0x83, 0x02, 0xf6, 0x80}) // roll forward with a null header
	f.Fuzz(func(t *testing.T, data []byte) {
		protocoltest.DecodeStable(t, spec, data)
	})
}
