package notify_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/notify"
)

const upstream = peer.ID("upstream")

// sink records the client's callbacks in order.
type sink struct {
	mu     sync.Mutex
	events []string
}

func (s *sink) add(e string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

func (s *sink) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

func (s *sink) configure(o *notify.Options) {
	o.OnAnnouncement = func(from peer.ID, h *block.Header) { s.add("ann(" + h.Point().String() + ")") }
	o.OnBlockOffer = func(from peer.ID, p block.Point, size uint64) { s.add("offer(" + p.String() + ")") }
	o.OnBlockTxsOffer = func(from peer.ID, p block.Point) { s.add("txs(" + p.String() + ")") }
	o.OnVotes = func(from peer.ID, votes []block.Vote) { s.add(label(&notify.MsgVotes{Votes: votes})) }
}

// upstreamPeer is a scripted server that a relay's client follows.
type upstreamPeer struct {
	server   *protocol.Session
	client   *protocol.Session
	followed chan error
	cv       *protocoltest.Violations
}

func follow(t *testing.T, r *notify.Relay) *upstreamPeer {
	t.Helper()
	client, server, cv, _ := pair(t)
	u := &upstreamPeer{server: server, client: client, followed: make(chan error, 1), cv: cv}
	go func() { u.followed <- r.Follow(context.Background(), notify.Peer{ID: upstream}, client) }()
	t.Cleanup(func() { client.Close(); <-u.followed })
	return u
}

// send answers one request next with each message.
func (u *upstreamPeer) send(t *testing.T, msgs ...protocol.Message) {
	t.Helper()
	for _, m := range msgs {
		if _, err := u.server.Recv(context.Background()); err != nil {
			t.Fatalf("waiting for a request: %v", err)
		}
		if err := u.server.Send(m); err != nil {
			t.Fatalf("send %s: %v", label(m), err)
		}
	}
}

func ann(h *block.Header) protocol.Message { return &notify.MsgBlockAnnouncement{Header: h} }

func TestClientKeepsMaxInFlight(t *testing.T) {
	n := newTestNet(t, 1)
	r := n.relay(t)
	a, b := net.Pipe()
	client := protocol.NewSession(context.Background(), protocol.Config{Spec: notify.Spec(), Role: protocol.Client, Stream: protocoltest.PipeStream{Conn: a}})
	followed := make(chan error, 1)
	go func() { followed <- r.Follow(context.Background(), notify.Peer{ID: upstream}, client) }()
	defer func() { client.Close(); <-followed }()

	// Read raw frames: MaxInFlight requests arrive before any answer, and
	// no more.
	frames := make(chan []byte)
	go func() {
		defer close(frames)
		br := bufio.NewReader(b)
		for {
			n, err := protocol.ReadFrameLen(br)
			if err != nil {
				return
			}
			body := make([]byte, n)
			if _, err := br.Read(body); err != nil {
				return
			}
			frames <- body
		}
	}()
	for i := range notify.MaxInFlight {
		select {
		case f := <-frames:
			if string(f) != "\x81\x00" {
				t.Fatalf("frame %d is %x, not request next", i, f)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d requests in flight", i)
		}
	}
	select {
	case f := <-frames:
		t.Fatalf("request %d sent before any answer: %x", notify.MaxInFlight+1, f)
	case <-time.After(50 * time.Millisecond):
	}
	_ = b.Close()
}

// TestServerRefusesOverPipelining: a client with more than MaxInFlight
// requests outstanding violates the protocol.
func TestServerRefusesOverPipelining(t *testing.T) {
	n := newTestNet(t, 1)
	r := n.relay(t)
	a, b := net.Pipe()
	sv := new(protocoltest.Violations)
	server := protocol.NewSession(context.Background(), protocol.Config{Spec: notify.Spec(), Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: b}, OnViolation: sv.Add})
	defer server.Close()
	served := make(chan error, 1)
	go func() { served <- r.Serve(server.Context(), server) }()
	go func() {
		var frames []byte
		for range notify.MaxInFlight + 1 {
			frames = protocol.AppendFrame(frames, []byte{0x81, 0x00})
		}
		_, _ = a.Write(frames)
	}()
	if err := <-served; !errors.Is(err, protocol.ErrAgency) {
		t.Fatalf("Serve: %v, want ErrAgency", err)
	}
	// The session reports its violation once it has torn down, which may
	// be after Serve saw the session end.
	eventually(t, "the violation reported", func() bool { return isViolation(sv.List(), protocol.ErrAgency) })
	_ = a.Close()
}

// TestClientCallbacks: what a peer sends reaches the node's sinks in the
// peer's order; a repeated announcement is not reported twice (a vote sent
// twice on one stream is a violation: TestRepeatedVotesAreAViolation).
func TestClientCallbacks(t *testing.T) {
	n := newTestNet(t, 2)
	var s sink
	r := n.relay(t, s.configure)
	u := follow(t, r)
	e := newEB(t, 1, 2)
	h := n.header(50, 0, e.announcement(), 0)
	p := block.Point{Slot: 50, Hash: e.body.Hash()}
	plain := n.header(51, 1, nil, 0)
	votes := []block.Vote{{RbHash: h.Hash(), VoterSeat: 1}, {RbHash: h.Hash(), VoterSeat: 2}}
	u.send(t,
		ann(h),
		ann(h), // echoed back by another relay: nothing new
		&notify.MsgBlockOffer{Point: p, EbSize: uint32(e.body.Size())},
		ann(plain),
		&notify.MsgBlockTxsOffer{Point: p},
		&notify.MsgVotes{Votes: votes},
		&notify.MsgVotes{Votes: []block.Vote{{RbHash: h.Hash(), VoterSeat: 3}}},
	)
	want := []string{"ann(" + h.Point().String() + ")", "offer(" + p.String() + ")", "ann(" + plain.Point().String() + ")", "txs(" + p.String() + ")", "votes(2)", "votes(1)"}
	eventually(t, "every callback", func() bool { return len(s.list()) >= len(want) })
	got := s.list()
	if len(got) != len(want) {
		t.Fatalf("callbacks %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("callbacks %v, want %v", got, want)
		}
	}
	if errs := u.cv.List(); len(errs) != 0 {
		t.Fatalf("violations %v", errs)
	}
}

// TestClientViolations: each broken rule ends the stream, counts against the
// peer, and reports nothing to the node.
func TestClientViolations(t *testing.T) {
	n := newTestNet(t, 1)
	e := newEB(t, 7)
	p := block.Point{Slot: 60, Hash: e.body.Hash()}
	forged := tampered(t, n.header(61, 0, nil, 0))
	voted := n.header(62, 0, e.announcement(), 0)
	for _, tc := range []struct {
		name       string
		script     []protocol.Message
		want       error
		disconnect bool
		reported   int // callbacks before the violation
	}{
		{
			name:       "third header for one (slot, issuer)",
			script:     []protocol.Message{ann(n.header(60, 0, nil, 0)), ann(n.header(60, 0, nil, 1)), ann(n.header(60, 0, nil, 2))},
			want:       notify.ErrThirdHeader,
			disconnect: true,
			reported:   2,
		},
		{
			name:   "block offer never announced",
			script: []protocol.Message{&notify.MsgBlockOffer{Point: p, EbSize: 10}},
			want:   notify.ErrUnannouncedOffer,
		},
		{
			name:     "block txs offer of a point announced by another header",
			script:   []protocol.Message{ann(n.header(60, 0, e.announcement(), 0)), &notify.MsgBlockTxsOffer{Point: block.Point{Slot: 59, Hash: p.Hash}}},
			want:     notify.ErrUnannouncedOffer,
			reported: 1,
		},
		{
			name:   "invalid header",
			script: []protocol.Message{ann(forged)},
			want:   notify.ErrInvalidHeader,
		},
		{
			name:   "header from the future",
			script: []protocol.Message{ann(n.header(slotsPast+5, 0, nil, 0))},
			want:   notify.ErrFutureSlot,
		},
		{
			name:   "vote for an RB never announced",
			script: []protocol.Message{&notify.MsgVotes{Votes: []block.Vote{{VoterSeat: 1}}}},
			want:   notify.ErrUnknownRB,
		},
		{
			name:       "invalid vote",
			script:     []protocol.Message{ann(voted), &notify.MsgVotes{Votes: []block.Vote{{RbHash: voted.Hash(), VoterSeat: 1 << 15}}}},
			want:       notify.ErrInvalidVote,
			disconnect: true,
			reported:   1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s sink
			r := n.relay(t, s.configure, func(o *notify.Options) {
				o.ValidateVotes = func(votes []block.Vote, _ []block.VoteSubject) error {
					for _, v := range votes {
						if v.VoterSeat >= 1<<14 {
							return errors.New("no such seat")
						}
					}
					return nil
				}
			})
			u := follow(t, r)
			u.send(t, tc.script...)
			select {
			case err := <-u.followed:
				if !errors.Is(err, tc.want) {
					t.Fatalf("Follow: %v, want %v", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("Follow goes on; want %v", tc.want)
			}
			u.followed <- nil // for the cleanup
			if !isViolation(u.cv.List(), tc.want) {
				t.Fatalf("violations %v, want %v", u.cv.List(), tc.want)
			}
			if got := len(s.list()); got != tc.reported {
				t.Fatalf("%d callbacks (%v), want %d", got, s.list(), tc.reported)
			}
			if tc.disconnect != isViolation(u.cv.List(), protocol.ErrDisconnect) {
				t.Fatalf("violations %v: disconnect %v", u.cv.List(), !tc.disconnect)
			}
		})
	}
}

// TestClientIgnoresImmutable: a peer behind us may announce and offer what
// is immutable for us; that is ignored, not a violation.
func TestClientIgnoresImmutable(t *testing.T) {
	n := newTestNet(t, 1)
	var s sink
	r := n.relay(t, s.configure, func(o *notify.Options) { o.ImmutableSlot = func() uint64 { return 100 } })
	u := follow(t, r)
	e := newEB(t, 9)
	old := n.header(90, 0, e.announcement(), 0)
	p := block.Point{Slot: 90, Hash: e.body.Hash()}
	fresh := n.header(120, 0, nil, 0)
	u.send(t, ann(old), &notify.MsgBlockOffer{Point: p, EbSize: uint32(e.body.Size())}, &notify.MsgBlockTxsOffer{Point: p}, ann(fresh))
	eventually(t, "the fresh announcement", func() bool { return len(s.list()) == 1 })
	if got := s.list(); got[0] != "ann("+fresh.Point().String()+")" {
		t.Fatalf("callbacks %v", got)
	}
	if errs := u.cv.List(); len(errs) != 0 {
		t.Fatalf("violations %v", errs)
	}
}

// A peer that announces and offers below the immutable tip again and again
// spends its budget: the first past it ends the stream as its violation
// (network.ErrWasteful), counted once.
func TestClientImmutableFloodSpendsTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { immutableFlood(t) })
}

func immutableFlood(t *testing.T) {
	n := newTestNet(t, 1)
	var s sink
	r := n.relay(t, s.configure, func(o *notify.Options) { o.ImmutableSlot = func() uint64 { return 100 } })
	client, server, cv, _ := pair(t)
	const burst = 50
	budget := network.NewWasteBudget(1, burst)
	var charged atomic.Int64
	followed := make(chan error, 1)
	go func() {
		followed <- r.Follow(context.Background(), notify.Peer{ID: upstream, Waste: func(n int, what string) error {
			charged.Add(int64(n))
			return budget.Spend(n, what)
		}}, client)
	}()
	e := newEB(t, 9)
	old := n.header(90, 0, e.announcement(), 0)
	p := block.Point{Slot: 90, Hash: e.body.Hash()}
	junk := []protocol.Message{ann(old), &notify.MsgBlockOffer{Point: p, EbSize: uint32(e.body.Size())}, &notify.MsgBlockTxsOffer{Point: p}}
	for i := 0; i < 10*burst; i++ {
		if _, err := server.Recv(context.Background()); err != nil {
			break
		}
		if err := server.Send(junk[i%len(junk)]); err != nil {
			break
		}
	}
	synctest.Wait()
	var err error
	select {
	case err = <-followed:
	default:
		t.Fatalf("the follower still takes junk below the immutable tip: %d charged, violations %v", charged.Load(), cv.List())
	}
	if !errors.Is(err, network.ErrWasteful) {
		t.Fatalf("Follow ended with %v, want ErrWasteful", err)
	}
	if errs := cv.List(); len(errs) != 1 || !errors.Is(errs[0], network.ErrWasteful) {
		t.Fatalf("violations %v, want the one ErrWasteful", errs)
	}
	if got := charged.Load(); got != burst+1 {
		t.Fatalf("%d charged, want the burst and the one past it", got)
	}
	if got := s.list(); len(got) != 0 {
		t.Fatalf("the node heard %v", got)
	}
}

// TestPeerMayRelayAnotherPair: an equivocator made three headers for one
// (slot, issuer); we relayed two of them, a peer relays a different two.
// Its header that we refuse is no violation and its offers are ignored —
// but its own third header is.
func TestPeerMayRelayAnotherPair(t *testing.T) {
	n := newTestNet(t, 1)
	var s sink
	r := n.relay(t, s.configure)
	e := newEB(t, 11)
	h := func(v byte) *block.Header { return n.header(70, 0, e.announcement(), v) }
	for _, v := range []byte{1, 2} {
		if err := r.Announce(h(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Announce(h(3)); !errors.Is(err, notify.ErrEquivocation) {
		t.Fatalf("a third header: %v", err)
	}
	u := follow(t, r)
	p := block.Point{Slot: 70, Hash: e.body.Hash()}
	other := newEB(t, 12)
	refused := n.header(70, 0, other.announcement(), 3)
	refusedPoint := block.Point{Slot: 70, Hash: other.body.Hash()}
	u.send(t,
		ann(refused),
		&notify.MsgBlockOffer{Point: refusedPoint, EbSize: uint32(other.body.Size())},
		ann(h(1)),
		ann(refused), // again: still its second
		&notify.MsgBlockOffer{Point: p, EbSize: uint32(e.body.Size())},
	)
	eventually(t, "the offer of the relayed pair", func() bool { return len(s.list()) == 1 })
	if got := s.list(); got[0] != "offer("+p.String()+")" {
		t.Fatalf("callbacks %v", got)
	}
	if errs := u.cv.List(); len(errs) != 0 {
		t.Fatalf("violations %v", errs)
	}
	u.send(t, ann(h(2)))
	select {
	case err := <-u.followed:
		if !errors.Is(err, notify.ErrThirdHeader) {
			t.Fatalf("Follow: %v", err)
		}
		u.followed <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("the peer's own third header was accepted")
	}
	if !isViolation(u.cv.List(), protocol.ErrDisconnect) {
		t.Fatalf("violations %v: the peer is not disconnected", u.cv.List())
	}
}
