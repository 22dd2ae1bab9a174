package peersharing_test

import (
	"testing"

	"github.com/leiosnode/leiosnode/network/peersharing"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// FuzzDecode: any bytes decode to a peer-sharing message or fail with
// ErrMalformed; a decoded message's encoding is stable, and every peer it
// shares converts to an address libp2p dials.
func FuzzDecode(f *testing.F) {
	spec := peersharing.Spec()
	for _, m := range []protocol.Message{
		&peersharing.MsgShareRequest{Amount: 8},
		&peersharing.MsgSharePeers{},
		&peersharing.MsgSharePeers{Peers: []peersharing.PeerAddress{address(f, testPeer(f, 1))}},
		&peersharing.MsgDone{},
	} {
		data, err := protocol.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0x82, 0x00, 0x19, 0x01, 0x00}) // amount 256
	f.Add([]byte{0x82, 0x01, 0xf6})             // null peers
	f.Fuzz(func(t *testing.T, data []byte) {
		m := protocoltest.DecodeStable(t, spec, data)
		reply, ok := m.(*peersharing.MsgSharePeers)
		if !ok {
			return
		}
		for i := range reply.Peers {
			info := reply.Peers[i].AddrInfo()
			if info.ID == "" || len(info.Addrs) != len(reply.Peers[i].Addrs) {
				t.Fatalf("peer %d converts to %v", i, info)
			}
		}
	})
}
