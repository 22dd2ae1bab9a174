package notify_test

import (
	"bytes"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/notify"
)

// FuzzDecode: any bytes decode to a notify message or fail with a
// violation; an announcement keeps the header's original bytes; a decoded
// message's encoding is stable.
func FuzzDecode(f *testing.F) {
	spec := notify.Spec()
	n := newTestNet(f, 1)
	p := block.Point{Slot: 9, Hash: fillHash(0x42)}
	for _, m := range []protocol.Message{
		&notify.MsgRequestNext{},
		&notify.MsgDone{},
		&notify.MsgBlockAnnouncement{Header: n.header(9, 0, &block.Announcement{EbHash: p.Hash, EbSize: 100}, 0)},
		&notify.MsgBlockAnnouncement{Header: n.header(10, 0, nil, 1)},
		&notify.MsgBlockOffer{Point: p, EbSize: 100},
		&notify.MsgBlockTxsOffer{Point: p},
		&notify.MsgVotes{Votes: []block.Vote{{RbHash: p.Hash, VoterSeat: 3}, {RbHash: p.Hash, VoterSeat: 1 << 15}}},
	} {
		data, err := protocol.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0x82, 0x01, 0xf6})       // announcement with a null header
	f.Add([]byte{0x83, 0x02, 0x80, 0x05}) // offer of the origin
	f.Add([]byte{0x82, 0x04, 0x80})       // empty vote batch
	f.Fuzz(func(t *testing.T, data []byte) {
		m := protocoltest.DecodeStable(t, spec, data)
		if m == nil {
			return
		}
		if a, ok := m.(*notify.MsgBlockAnnouncement); ok && !bytes.Equal(a.Header.Bytes(), secondItem(t, data)) {
			t.Fatal("a decoded header does not keep its original bytes")
		}
	})
}

// secondItem returns the raw payload item of a two-element message.
func secondItem(t *testing.T, data []byte) []byte {
	var items []block.RawCBOR
	if err := block.Unmarshal(data, &items); err != nil || len(items) != 2 {
		t.Fatalf("message items: %v", err)
	}
	return items[1]
}
