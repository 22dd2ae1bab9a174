package peersharing_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/network/internal/hosttest"
	"github.com/leiosnode/leiosnode/network/peersharing"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sessions returns a client and a server session over a pipe, and the
// client's violation.
func sessions(t *testing.T) (client, server *protocol.Session, violations <-chan error) {
	t.Helper()
	client, server, violations, _ = protocoltest.Sessions(t, context.Background(), peersharing.Spec())
	return client, server, violations
}

// testPeer is peer n, its ID from hosttest's keys, at a loopback address.
func testPeer(t testing.TB, n byte) peer.AddrInfo {
	t.Helper()
	key, err := crypto.UnmarshalEd25519PrivateKey(hosttest.Key(n))
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return peer.AddrInfo{ID: id, Addrs: []ma.Multiaddr{
		ma.StringCast(fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", 3000+int(n))),
		ma.StringCast("/dns4/relay.example/tcp/3001"),
	}}
}

func TestSpecValidates(t *testing.T) {
	if err := peersharing.Spec().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestExchange: the server answers each request with at most the amount
// asked for, from what Share returns, and ends when the client says done.
func TestExchange(t *testing.T) {
	var all []peer.AddrInfo
	for n := range byte(5) {
		all = append(all, testPeer(t, n+1))
	}
	noAddrs := peer.AddrInfo{ID: testPeer(t, 9).ID}
	var asked []int
	srv := &peersharing.Server{Share: func(amount int) []peer.AddrInfo {
		asked = append(asked, amount)
		return append([]peer.AddrInfo{noAddrs}, all...) // one too many, and one with no address
	}}
	client, server, cv := sessions(t)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(server.Context(), server) }()

	got, err := peersharing.Request(context.Background(), client, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != all[0].ID || got[2].ID != all[2].ID {
		t.Fatalf("got %v, want the first three peers with addresses", got)
	}
	if len(got[1].Addrs) != 2 || !got[1].Addrs[0].Equal(all[1].Addrs[0]) || !got[1].Addrs[1].Equal(all[1].Addrs[1]) {
		t.Fatalf("addresses %v, want %v", got[1].Addrs, all[1].Addrs)
	}
	if err := <-served; err != nil {
		t.Fatalf("server: %v", err)
	}
	if len(asked) != 1 || asked[0] != 3 {
		t.Fatalf("Share asked for %v, want [3]", asked)
	}
	if client.State() != peersharing.StDone {
		t.Fatalf("client in %s after done", client.State())
	}
	select {
	case err := <-cv:
		t.Fatalf("violation %v", err)
	default:
	}
}

// TestServerAsksNothingForZero: a request for no peers is answered with
// none, without asking Share.
func TestServerAsksNothingForZero(t *testing.T) {
	srv := &peersharing.Server{Share: func(int) []peer.AddrInfo { t.Error("Share called for zero peers"); return nil }}
	client, server, _ := sessions(t)
	go func() { _ = srv.Serve(server.Context(), server) }()
	got, err := peersharing.Request(context.Background(), client, 0)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v", got, err)
	}
}

// TestTooManyPeersIsViolation: a server that shares more peers than asked
// for breaks the protocol.
func TestTooManyPeersIsViolation(t *testing.T) {
	client, server, cv := sessions(t)
	go func() {
		if _, err := server.Recv(context.Background()); err != nil {
			return
		}
		var reply peersharing.MsgSharePeers
		for n := range byte(3) {
			reply.Peers = append(reply.Peers, address(t, testPeer(t, n+1)))
		}
		_ = server.Send(&reply)
	}()
	if _, err := peersharing.Request(context.Background(), client, 2); !errors.Is(err, peersharing.ErrTooManyPeers) {
		t.Fatalf("request: %v, want ErrTooManyPeers", err)
	}
	if err := <-cv; !errors.Is(err, peersharing.ErrTooManyPeers) {
		t.Fatalf("reported %v", err)
	}
}

// TestAgency: a server may not speak first, a client may not ask twice
// before the answer; each is a violation that ends the session.
func TestAgency(t *testing.T) {
	t.Run("server speaks first", func(t *testing.T) {
		client, raw, cv := rawPeer(t, protocol.Client)
		if _, err := raw.Write(protocoltest.Frames(t, &peersharing.MsgSharePeers{})); err != nil {
			t.Fatal(err)
		}
		if err := <-cv; !errors.Is(err, protocol.ErrAgency) {
			t.Fatalf("reported %v, want ErrAgency", err)
		}
		<-client.Context().Done()
	})
	t.Run("client asks twice", func(t *testing.T) {
		server, raw, sv := rawPeer(t, protocol.Server)
		go func() {
			_ = (&peersharing.Server{Share: func(int) []peer.AddrInfo { return nil }}).Serve(server.Context(), server)
		}()
		go func() {
			_, _ = raw.Write(protocoltest.Frames(t, &peersharing.MsgShareRequest{Amount: 1}, &peersharing.MsgShareRequest{Amount: 1}))
		}()
		if err := <-sv; !errors.Is(err, protocol.ErrAgency) {
			t.Fatalf("reported %v, want ErrAgency", err)
		}
	})
}

// rawPeer returns a session of role on one end of a pipe, the other end
// to play the peer by hand, and the session's violations. What the session
// sends is read by the test (readFrame) or not at all.
func rawPeer(t *testing.T, role protocol.Agency) (*protocol.Session, net.Conn, <-chan error) {
	t.Helper()
	a, b := net.Pipe()
	v := make(chan error, 1)
	s := protocol.NewSession(context.Background(), protocol.Config{Spec: peersharing.Spec(), Role: role, Stream: protocoltest.PipeStream{Conn: a}, OnViolation: func(err error) { v <- err }})
	t.Cleanup(func() { s.Close(); b.Close() })
	return s, b, v
}

// readFrame reads one frame's body.
func readFrame(r *bufio.Reader) ([]byte, error) {
	n, err := protocol.ReadFrameLen(r)
	if err != nil {
		return nil, err
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return body, err
}

// TestCodecRoundTrip: every message decodes to what was encoded, and
// encodes again to the same bytes.
func TestCodecRoundTrip(t *testing.T) {
	spec := peersharing.Spec()
	for _, m := range []protocol.Message{
		&peersharing.MsgShareRequest{Amount: 0},
		&peersharing.MsgShareRequest{Amount: 255},
		&peersharing.MsgSharePeers{Peers: []peersharing.PeerAddress{}},
		&peersharing.MsgSharePeers{Peers: []peersharing.PeerAddress{address(t, testPeer(t, 1)), address(t, testPeer(t, 2))}},
		&peersharing.MsgDone{},
	} {
		data, err := protocol.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		got := protocoltest.DecodeStable(t, spec, data)
		if got == nil {
			t.Fatalf("%T does not decode", m)
		}
		again, err := protocol.Encode(got)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("%T: % x re-encodes to % x (%v)", m, data, again, err)
		}
	}
}

// TestMalformedClosesStream: a message that does not decode, or shares an
// address that does not parse, ends the session as malformed and resets
// the stream.
func TestMalformedClosesStream(t *testing.T) {
	good := address(t, testPeer(t, 1))
	withP2P := good
	withP2P.Addrs = [][]byte{ma.StringCast("/ip4/127.0.0.1/tcp/1/p2p/" + testPeer(t, 1).ID.String()).Bytes()}
	tooMany := good
	tooMany.Addrs = nil
	for range peersharing.MaxAddrsPerPeer + 1 {
		tooMany.Addrs = append(tooMany.Addrs, good.Addrs[0])
	}
	for _, tc := range []struct {
		name    string
		request []byte // what the client sends first, if not a good request
		reply   []byte // what the server answers
	}{
		{name: "amount over 255", request: frame(t, []byte{0x82, 0x00, 0x19, 0x01, 0x00})},
		{name: "unknown tag", request: frame(t, []byte{0x81, 0x07})},
		{name: "not an array", reply: frame(t, []byte{0x01})},
		{name: "bad peer ID", reply: frames(t, peersharing.PeerAddress{ID: []byte{1, 2, 3}, Addrs: good.Addrs})},
		{name: "bad multiaddr", reply: frames(t, peersharing.PeerAddress{ID: good.ID, Addrs: [][]byte{{0xff, 0xff}}})},
		{name: "no address", reply: frames(t, peersharing.PeerAddress{ID: good.ID, Addrs: [][]byte{}})},
		{name: "address with a peer ID", reply: frames(t, withP2P)},
		{name: "too many addresses", reply: frames(t, tooMany)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				s    *protocol.Session
				raw  net.Conn
				v    <-chan error
				done = make(chan error, 1)
			)
			if tc.request != nil {
				s, raw, v = rawPeer(t, protocol.Server)
				go func() {
					done <- (&peersharing.Server{Share: func(int) []peer.AddrInfo { return nil }}).Serve(s.Context(), s)
				}()
				if _, err := raw.Write(tc.request); err != nil {
					t.Fatal(err)
				}
			} else {
				s, raw, v = rawPeer(t, protocol.Client)
				go func() {
					_, err := peersharing.Request(context.Background(), s, 5)
					done <- err
				}()
				if _, err := readFrame(bufio.NewReader(raw)); err != nil {
					t.Fatal(err)
				}
				if _, err := raw.Write(tc.reply); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-v; !errors.Is(err, protocol.ErrMalformed) {
				t.Fatalf("reported %v, want ErrMalformed", err)
			}
			if err := <-done; !errors.Is(err, protocol.ErrMalformed) {
				t.Fatalf("ended with %v, want ErrMalformed", err)
			}
			// The stream is reset: the raw side can no longer write.
			_ = raw.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := raw.Write([]byte{0}); !errors.Is(err, io.ErrClosedPipe) {
				t.Fatalf("write after a malformed message: %v, want the pipe closed", err)
			}
		})
	}
}

func address(t testing.TB, info peer.AddrInfo) peersharing.PeerAddress {
	t.Helper()
	a := peersharing.PeerAddress{ID: []byte(info.ID)}
	for _, addr := range info.Addrs {
		a.Addrs = append(a.Addrs, addr.Bytes())
	}
	return a
}

// frame is one frame of a raw message body.
func frame(t *testing.T, body []byte) []byte {
	t.Helper()
	return protocol.AppendFrame(nil, body)
}

// frames is a share-peers reply of the given peers as a server writes it,
// unchecked.
func frames(t *testing.T, peers ...peersharing.PeerAddress) []byte {
	t.Helper()
	return protocoltest.Frames(t, &peersharing.MsgSharePeers{Peers: peers})
}
