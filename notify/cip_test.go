package notify_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/notify"
)

// cipSpecs are the CIP's three streams by name.
func cipSpecs() map[string]*protocol.Spec {
	return map[string]*protocol.Spec{
		"announce":    notify.AnnounceSpec(),
		"votes":       notify.VotesSpec(),
		"blocknotify": notify.BlockNotifySpec(),
	}
}

func TestCIPSpecsValidate(t *testing.T) {
	for name, spec := range cipSpecs() {
		if err := spec.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := "/leios/" + name + "/1"; spec.ID() != want {
			t.Fatalf("%s: ID %s, want %s", name, spec.ID(), want)
		}
	}
}

// The CIP streams' messages encode to the vectors derived from the CDDL in
// testdata/cip-notify.golden, and decode back to the same bytes.
func TestCIPGolden(t *testing.T) {
	offer := &notify.MsgLeiosBlockOffer{Slot: 1234, EbHash: fillHash(0x11), BlockHeight: 42}
	issuer := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	prev := fillHash(0x11)
	hb := block.HeaderBody{BlockNumber: 1, Slot: 5, PrevHash: &prev, BodySize: 42, BodyHash: fillHash(0x66),
		Announcement: &block.Announcement{EbHash: fillHash(0x77), EbSize: 1000}, Encoding: block.EncodingCIP}
	copy(hb.IssuerVKey[:], issuer.Public().(ed25519.PublicKey))
	copy(hb.VRFVKey[:], bytes.Repeat([]byte{0x33}, 32))
	copy(hb.VRF.Output[:], bytes.Repeat([]byte{0x44}, 64))
	copy(hb.VRF.Proof[:], bytes.Repeat([]byte{0x55}, 80))
	msgs := map[string]protocol.Message{
		"block announcement": &notify.MsgBlockAnnouncement{Header: block.NewHeader(hb, issuer)},
		"request next 100":   &notify.MsgLeiosRequestNext{N: 100},
		"request next 1":     &notify.MsgLeiosRequestNext{N: 1},
		"request next 1000":  &notify.MsgLeiosRequestNext{N: 1000},
		"announce done":      &notify.MsgLeiosDone{},
		"vote": &notify.MsgLeiosVote{Vote: notify.LeiosVote{
			Slot: 1234, EbHash: fillHash(0x11), VoterID: 0x0102, Signature: fillSig(0x22)}},
		"votes done":        &notify.MsgLeiosDone{},
		"block offer":       offer,
		"block txs offer":   &notify.MsgLeiosBlockTxsOffer{Slot: offer.Slot, EbHash: offer.EbHash, BlockHeight: offer.BlockHeight},
		"block-notify done": &notify.MsgLeiosBlockNotifyDone{},
	}
	specs := cipSpecs()
	protocoltest.CheckGolden(t, "testdata/cip-notify.golden", msgs, func(name string) *protocol.Spec {
		switch {
		case name == "block announcement":
			return specs["announce"]
		case strings.HasPrefix(name, "vote"):
			return specs["votes"]
		case strings.HasPrefix(name, "block"):
			return specs["blocknotify"]
		}
		return specs["announce"]
	})
}

// Malformed CIP stream messages are refused as violations.
func TestCIPMalformed(t *testing.T) {
	h := "5820" + rep(0x11, 32)
	sig := "5830" + rep(0x22, 48)
	for _, tc := range []struct{ name, stream, hex string }{
		{"a grant of none", "announce", "82 00 00"},
		{"a grant over MaxGrant", "votes", "82 00 1903e9"},
		{"a request without its grant", "blocknotify", "81 00"},
		{"a negative grant", "announce", "82 00 20"},
		{"an announcement without a header", "announce", "82 01 f6"},
		{"a vote with a 17-bit voter", "votes", "82 01 84 01" + h + "1a00010000" + sig},
		{"a vote with a short signature", "votes", "82 01 84 01" + h + "01 5801 22"},
		{"a vote not nested", "votes", "85 01 01" + h + "01" + sig},
		{"a vote with an indefinite array", "votes", "82 01 9f 01" + h + "01" + sig + "ff"},
		{"a tagged slot", "votes", "82 01 84 c2 41 01" + h + "01" + sig},
		{"an offer of the origin", "blocknotify", "84 01 00 5820" + rep(0, 32) + "00"},
		{"an offer without its height", "blocknotify", "83 01 01" + h},
		{"a txs offer with a short hash", "blocknotify", "84 02 01 5801 11 01"},
		{"another stream's tag", "announce", "81 03"},
		{"an unknown tag", "votes", "81 07"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cipSpecs()[tc.stream].Decode(unhexT(t, tc.hex))
			if err == nil || !protocol.IsViolation(err) {
				t.Fatalf("err %v, want a violation", err)
			}
		})
	}
}

// Each CIP stream message with an integer, a length or a count longer than
// it needs is refused (ErrNonMinimal), as the CDDL's encoding has none.
func TestCIPNonMinimal(t *testing.T) {
	h := "5820" + rep(0x11, 32)
	sig := "5830" + rep(0x22, 48)
	header := hex.EncodeToString(newTestNet(t, 1).header(42, 0, nil, 0).Bytes())
	for _, tc := range []struct{ name, stream, hex string }{
		{"request next, n in two bytes", "votes", "82 00 1805"},
		{"request next, tag in two bytes", "blocknotify", "82 1800 05"},
		{"request next, array in two bytes", "announce", "98 02 00 05"},
		{"announcement, tag in two bytes", "announce", "82 1801" + header},
		{"announce done, tag in two bytes", "announce", "81 1802"},
		{"vote, slot in two bytes", "votes", "82 01 84 1801" + h + "01" + sig},
		{"vote, voter in three bytes", "votes", "82 01 84 01" + h + "190001" + sig},
		{"vote, hash length in three bytes", "votes", "82 01 84 01 590020" + rep(0x11, 32) + "01" + sig},
		{"votes done, tag in two bytes", "votes", "81 1802"},
		{"block offer, height in two bytes", "blocknotify", "84 01 01" + h + "1801"},
		{"block txs offer, slot in five bytes", "blocknotify", "84 02 1a00000001" + h + "01"},
		{"block-notify done, tag in two bytes", "blocknotify", "81 1803"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cipSpecs()[tc.stream].Decode(unhexT(t, tc.hex))
			if !errors.Is(err, protocol.ErrNonMinimal) || !protocol.IsViolation(err) {
				t.Fatalf("err %v, want ErrNonMinimal", err)
			}
		})
	}
}

func unhexT(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzDecodeCIP: any bytes decode to a message of the stream the first
// byte picks, or fail with a violation; a decoded message's encoding is
// stable.
func FuzzDecodeCIP(f *testing.F) {
	names := []string{"announce", "votes", "blocknotify"}
	for _, data := range protocoltest.Golden(f, "testdata/cip-notify.golden") {
		for i := range names {
			f.Add(append([]byte{byte(i)}, data...))
		}
	}
	specs := cipSpecs()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		protocoltest.DecodeStable(t, specs[names[int(data[0])%len(names)]], data[1:])
	})
}

// cipUpstream is a peer's side of the three CIP streams toward a relay
// that follows it (FollowCIP): the test serves each stream, by a relay or
// by hand.
type cipUpstream struct {
	mu       sync.Mutex
	servers  map[string]chan *protocol.Session // per stream name, each opened stream's server side
	cv       *protocoltest.Violations          // the follower's violations
	followed chan error
	once     sync.Once
	err      error // what FollowCIP returned, once wait has seen it
	ctx      context.Context
	serving  sync.WaitGroup // serveBy's goroutines
}

// wait waits for FollowCIP to return and returns its error.
func (u *cipUpstream) wait() error {
	u.once.Do(func() { u.err = <-u.followed })
	return u.err
}

// followCIP makes r follow a peer whose streams the test serves.
func followCIP(t *testing.T, r *notify.Relay) *cipUpstream {
	t.Helper()
	return followCIPAs(t, r, notify.Peer{ID: upstream})
}

// followCIPAs is followCIP of the peer from, with its budget.
func followCIPAs(t *testing.T, r *notify.Relay, from notify.Peer) *cipUpstream {
	t.Helper()
	u := &cipUpstream{servers: make(map[string]chan *protocol.Session), cv: new(protocoltest.Violations), followed: make(chan error, 1)}
	for name := range cipSpecs() {
		u.servers[name] = make(chan *protocol.Session, 4)
	}
	ctx, cancel := context.WithCancel(context.Background())
	u.ctx = ctx
	var sessions []*protocol.Session
	open := func(ctx context.Context, spec *protocol.Spec) (*protocol.Session, error) {
		a, b := net.Pipe()
		client := protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Client, Stream: protocoltest.PipeStream{Conn: a}, OnViolation: u.cv.Add})
		server := protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Server, Stream: protocoltest.PipeStream{Conn: b}})
		u.mu.Lock()
		sessions = append(sessions, client, server)
		u.mu.Unlock()
		u.servers[spec.Name] <- server
		return client, nil
	}
	go func() { u.followed <- r.FollowCIP(ctx, from, open) }()
	t.Cleanup(func() {
		cancel()
		u.mu.Lock()
		for _, s := range sessions {
			s.Close()
		}
		u.mu.Unlock()
		u.wait()
		u.serving.Wait()
	})
	return u
}

// serveBy serves every stream the follower opens with svc's servers.
func (u *cipUpstream) serveBy(t *testing.T, svc *notify.Service) {
	for _, srv := range svc.Servers() {
		ch, ok := u.servers[srv.Spec.Name]
		if !ok {
			continue
		}
		u.serving.Go(func() {
			for {
				select {
				case s := <-ch:
					u.serving.Go(func() { srv.Serve(s.Context(), s) })
				case <-u.ctx.Done():
					return
				}
			}
		})
	}
}

// stream is the server side of the named stream, once it is open.
func (u *cipUpstream) stream(t *testing.T, name string) *protocol.Session {
	t.Helper()
	return <-u.servers[name]
}

// sendAll sends msgs on s, waiting for grants as they are needed.
func sendAll(t *testing.T, s *protocol.Session, tokens *int, msgs ...protocol.Message) {
	t.Helper()
	for _, m := range msgs {
		for *tokens == 0 {
			g, err := s.Recv(context.Background())
			if err != nil {
				t.Fatalf("waiting for a grant: %v", err)
			}
			*tokens = g.(*notify.MsgLeiosRequestNext).Grants()
		}
		if err := s.Send(m); err != nil {
			t.Fatalf("send %T: %v", m, err)
		}
		*tokens--
	}
}

// A relay serves a follower over the CIP's three streams what it holds —
// the announcement, the body and closure offers with the announcing RB's
// height, the votes as the CIP's (slot, EB) — and the follower's node
// hears each in the prototype's terms: the offer with the EB's size, the
// votes for the RB.
func TestCIPStreamsCarryTheRelaysState(t *testing.T) {
	n := newTestNet(t, 1)
	upstreamRelay := n.relay(t)
	e := newEB(t, 1, 2, 3)
	h := n.header(slotsPast-5, 0, e.announcement(), 0)
	p := block.Point{Slot: h.Slot, Hash: e.body.Hash()}
	if err := upstreamRelay.Announce(h); err != nil {
		t.Fatal(err)
	}
	upstreamRelay.Offer(leiosdb.BodyStored, p, e.body.Size())
	upstreamRelay.Offer(leiosdb.ClosureComplete, p, e.body.Size())
	votes := []block.Vote{{RbHash: h.Hash(), VoterSeat: 0, Signature: fillSig(1)}, {RbHash: h.Hash(), VoterSeat: 3, Signature: fillSig(2)}}
	if _, err := upstreamRelay.Votes(votes); err != nil {
		t.Fatal(err)
	}
	svc, err := notify.NewService(notify.ServiceOptions{Relay: upstreamRelay})
	if err != nil {
		t.Fatal(err)
	}

	var events sink
	var sizes sync.Map
	r := n.relay(t, events.configure, func(o *notify.Options) {
		o.OnBlockOffer = func(_ peer.ID, p block.Point, size uint64) {
			sizes.Store(p, size)
			events.add("offer(" + p.String() + ")")
		}
	})
	u := followCIP(t, r)
	u.serveBy(t, svc)

	// The announcement first, the offers in their order, the votes in one
	// event or two (those that arrived together are checked together).
	eventually(t, "announcement, offers and both votes heard", func() bool {
		got := events.list()
		return slices.Contains(got, "txs("+p.String()+")") && len(r.VotesFor(h.Hash())) == 2
	})
	got := events.list()
	offerAt, txsAt := slices.Index(got, "offer("+p.String()+")"), slices.Index(got, "txs("+p.String()+")")
	if got[0] != "ann("+h.Point().String()+")" || offerAt < 0 || txsAt < offerAt {
		t.Fatalf("heard %v", got)
	}
	if size, _ := sizes.Load(p); size != e.body.Size() {
		t.Fatalf("block offer with size %v, want %d", size, e.body.Size())
	}
	if v := r.VotesFor(h.Hash()); v[0] != votes[0] || v[1] != votes[1] {
		t.Fatalf("relayed %+v, want %+v", v, votes)
	}
	if errs := u.cv.List(); len(errs) > 0 {
		t.Fatalf("violations: %v", errs)
	}
}

// The three streams are not ordered against each other: an offer or vote
// that arrives before its announcement is held, and handed on right after
// the announcement, in the order it came; an offer naming another height
// than the announcing header's is the peer's violation. On virtual time:
// synctest.Wait is when the follower has handled all that was sent.
func TestCIPHoldsWhatPrecedesItsAnnouncement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newTestNet(t, 1)
		e := newEB(t, 1, 2)
		h := n.header(slotsPast-5, 0, e.announcement(), 0)
		p := block.Point{Slot: h.Slot, Hash: e.body.Hash()}
		var events sink
		r := n.relay(t, events.configure)
		u := followCIP(t, r)
		announce, votes, offers := u.stream(t, "announce"), u.stream(t, "votes"), u.stream(t, "blocknotify")
		var at, vt, ot int

		sendAll(t, offers, &ot,
			&notify.MsgLeiosBlockOffer{Slot: p.Slot, EbHash: p.Hash, BlockHeight: h.BlockNumber},
			&notify.MsgLeiosBlockTxsOffer{Slot: p.Slot, EbHash: p.Hash, BlockHeight: h.BlockNumber})
		sendAll(t, votes, &vt, &notify.MsgLeiosVote{Vote: notify.LeiosVote{Slot: p.Slot, EbHash: p.Hash, VoterID: 0, Signature: fillSig(7)}})
		synctest.Wait()
		if got := events.list(); len(got) != 0 {
			t.Fatalf("heard %v before the announcement", got)
		}
		if errs := u.cv.List(); len(errs) > 0 {
			t.Fatalf("offers and a vote ahead of their announcement: violations %v", errs)
		}

		sendAll(t, announce, &at, &notify.MsgBlockAnnouncement{Header: h})
		synctest.Wait()
		vote := block.Vote{RbHash: h.Hash(), VoterSeat: 0, Signature: fillSig(7)}
		want := []string{"ann(" + h.Point().String() + ")", "offer(" + p.String() + ")", "txs(" + p.String() + ")", label(&notify.MsgVotes{Votes: []block.Vote{vote}})}
		if got := events.list(); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("heard %v, want %v", got, want)
		}

		sendAll(t, offers, &ot, &notify.MsgLeiosBlockOffer{Slot: p.Slot, EbHash: p.Hash, BlockHeight: h.BlockNumber + 1})
		if err := u.wait(); !errors.Is(err, notify.ErrUnannouncedOffer) {
			t.Fatalf("FollowCIP ended with %v, want ErrUnannouncedOffer", err)
		}
		if errs := u.cv.List(); !isViolation(errs, notify.ErrUnannouncedOffer) {
			t.Fatalf("an offer at another height: violations %v, want ErrUnannouncedOffer", errs)
		}
	})
}

// Each served CIP stream carries its own kind only, from the relay's
// current state.
func TestCIPServedStreamsCarryOneKindEach(t *testing.T) {
	n := newTestNet(t, 1)
	r := n.relay(t)
	e := newEB(t, 4)
	h := n.header(slotsPast-5, 0, e.announcement(), 0)
	p := block.Point{Slot: h.Slot, Hash: e.body.Hash()}
	if err := r.Announce(h); err != nil {
		t.Fatal(err)
	}
	r.Offer(leiosdb.BodyStored, p, e.body.Size())
	if _, err := r.Votes([]block.Vote{{RbHash: h.Hash(), VoterSeat: 1, Signature: fillSig(3)}}); err != nil {
		t.Fatal(err)
	}
	svc, err := notify.NewService(notify.ServiceOptions{Relay: r})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]protocol.Message{
		"announce":    &notify.MsgBlockAnnouncement{Header: h},
		"votes":       &notify.MsgLeiosVote{Vote: notify.LeiosVote{Slot: h.Slot, EbHash: p.Hash, VoterID: 1, Signature: fillSig(3)}},
		"blocknotify": &notify.MsgLeiosBlockOffer{Slot: p.Slot, EbHash: p.Hash, BlockHeight: h.BlockNumber},
	}
	for _, srv := range svc.Servers() {
		w, ok := want[srv.Spec.Name]
		if !ok {
			continue
		}
		t.Run(srv.Spec.Name, func(t *testing.T) {
			client, server, _, _ := protocoltest.Sessions(t, context.Background(), srv.Spec)
			go srv.Serve(server.Context(), server)
			if err := client.Send(&notify.MsgLeiosRequestNext{N: 2}); err != nil {
				t.Fatal(err)
			}
			m, err := client.Recv(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			gotBytes, _ := protocol.Encode(m)
			wantBytes, _ := protocol.Encode(w)
			if string(gotBytes) != string(wantBytes) {
				t.Fatalf("first message %T %x, want %T %x", m, gotBytes, w, wantBytes)
			}
			client.Close()
			server.Close()
		})
	}
}

// Votes that arrive while the follower is checking others are checked
// together, in one batch verification, as the prototype's vote batches
// are.
func TestCIPVotesArrivedTogetherAreVerifiedTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newTestNet(t, 1)
		e := newEB(t, 3)
		h := n.header(slotsPast-5, 0, e.announcement(), 0)
		release := make(chan struct{})
		var mu sync.Mutex
		var checks []int // the size of each batch checked
		r := n.relay(t, func(o *notify.Options) {
			o.ValidateVotes = func(votes []block.Vote, _ []block.VoteSubject) error {
				mu.Lock()
				first := len(checks) == 0
				checks = append(checks, len(votes))
				mu.Unlock()
				if first {
					<-release // the others arrive meanwhile
				}
				return nil
			}
		})
		u := followCIP(t, r)
		announce, votes := u.stream(t, "announce"), u.stream(t, "votes")
		var at, vt int
		sendAll(t, announce, &at, &notify.MsgBlockAnnouncement{Header: h})
		synctest.Wait()
		vote := func(seat uint16) protocol.Message {
			return &notify.MsgLeiosVote{Vote: notify.LeiosVote{Slot: h.Slot, EbHash: e.body.Hash(), VoterID: seat, Signature: fillSig(byte(seat))}}
		}
		sendAll(t, votes, &vt, vote(0))
		synctest.Wait() // the first is being checked
		for seat := range uint16(49) {
			sendAll(t, votes, &vt, vote(seat+1))
		}
		synctest.Wait()
		close(release)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(checks, []int{1, 49}) {
			t.Fatalf("checked in batches of %v, want [1 49]", checks)
		}
		if got := len(r.VotesFor(h.Hash())); got != 50 {
			t.Fatalf("%d votes relayed, want 50", got)
		}
	})
}

// Two RBs of one slot announce the same EB: a CIP vote names only the slot
// and the EB, so the follower tries it for each RB. The first copy may
// cost a check that fails; a copy from another peer goes straight to the
// RB the relay already holds the vote for.
func TestCIPVoteForOneOfTwoRBsOfASlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newTestNet(t, 2)
		e := newEB(t, 5)
		first := n.header(slotsPast-5, 0, e.announcement(), 0)
		second := n.header(slotsPast-5, 1, e.announcement(), 0)
		var mu sync.Mutex
		checks := 0
		r := n.relay(t, func(o *notify.Options) {
			o.ValidateVotes = func(votes []block.Vote, _ []block.VoteSubject) error {
				mu.Lock()
				defer mu.Unlock()
				checks += len(votes)
				for _, v := range votes {
					if v.RbHash != second.Hash() { // the voter voted for the second
						return errors.New("signature does not verify")
					}
				}
				return nil
			}
		})
		for _, h := range []*block.Header{first, second} {
			if err := r.Announce(h); err != nil {
				t.Fatal(err)
			}
		}
		vote := &notify.MsgLeiosVote{Vote: notify.LeiosVote{Slot: first.Slot, EbHash: e.body.Hash(), VoterID: 2, Signature: fillSig(9)}}
		for range 2 { // two peers relay the same vote
			u := followCIP(t, r)
			announce, votes := u.stream(t, "announce"), u.stream(t, "votes")
			var at, vt int
			sendAll(t, announce, &at, &notify.MsgBlockAnnouncement{Header: first}, &notify.MsgBlockAnnouncement{Header: second})
			synctest.Wait()
			sendAll(t, votes, &vt, vote)
			synctest.Wait()
			if errs := u.cv.List(); len(errs) > 0 {
				t.Fatalf("violations: %v", errs)
			}
		}
		if got := r.VotesFor(second.Hash()); len(got) != 1 || got[0].VoterSeat != 2 {
			t.Fatalf("votes for the second RB: %+v", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if checks != 2 {
			t.Fatalf("%d signature checks for two copies of one vote, want 2 (the first RB, then the second)", checks)
		}
	})
}

// A violation on one of a peer's CIP streams ends all three, and counts
// once: the siblings close as its consequence, not as offences of their own
// (three would ban the peer for one).
func TestCIPViolationCountsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newTestNet(t, 1)
		e := newEB(t, 1)
		h := n.header(slotsPast-5, 0, e.announcement(), 0)
		r := n.relay(t)
		u := followCIP(t, r)
		announce, offers := u.stream(t, "announce"), u.stream(t, "blocknotify")
		votes := u.stream(t, "votes")
		var at, ot int
		sendAll(t, announce, &at, &notify.MsgBlockAnnouncement{Header: h})
		synctest.Wait()
		sendAll(t, offers, &ot, &notify.MsgLeiosBlockOffer{Slot: h.Slot, EbHash: e.body.Hash(), BlockHeight: h.BlockNumber + 1})
		if err := u.wait(); !errors.Is(err, notify.ErrUnannouncedOffer) {
			t.Fatalf("FollowCIP ended with %v, want ErrUnannouncedOffer", err)
		}
		<-announce.Context().Done()
		<-votes.Context().Done()
		synctest.Wait()
		if errs := u.cv.List(); len(errs) != 1 || !errors.Is(errs[0], notify.ErrUnannouncedOffer) {
			t.Fatalf("violations %v, want the one ErrUnannouncedOffer", errs)
		}
	})
}

// A hostile peer floods its CIP streams with offers and votes naming slot
// 1, below the immutable tip: each is ignored as a peer behind us would
// send it, but each spends the peer's budget, and the first past it ends
// the streams as one violation (network.ErrWasteful) — where the client
// used to grant tokens again for ever. On virtual time.
func TestCIPJunkBelowTheImmutableTipSpendsTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newTestNet(t, 1)
		var events sink
		r := n.relay(t, events.configure, func(o *notify.Options) { o.ImmutableSlot = func() uint64 { return slotsPast - 100 } })
		const burst = 300
		budget := network.NewWasteBudget(1, burst)
		var charged []string
		u := followCIPAs(t, r, notify.Peer{ID: upstream, Waste: func(n int, what string) error {
			charged = append(charged, what) // the streams' handling is serialized
			return budget.Spend(n, what)
		}})
		offers, votes := u.stream(t, "blocknotify"), u.stream(t, "votes")
		junk := func(s *protocol.Session, i int) protocol.Message {
			if s == offers {
				return &notify.MsgLeiosBlockOffer{Slot: 1, EbHash: fillHash(byte(i)), BlockHeight: 1}
			}
			return &notify.MsgLeiosVote{Vote: notify.LeiosVote{Slot: 1, EbHash: fillHash(byte(i)), VoterID: uint16(i), Signature: fillSig(1)}}
		}
		for _, s := range []*protocol.Session{offers, votes} {
			go func() {
				tokens := 0
				for i := range 10 * burst { // enough: the flood is cut off past burst
					for tokens == 0 {
						g, err := s.Recv(context.Background())
						if err != nil {
							return
						}
						tokens = g.(*notify.MsgLeiosRequestNext).Grants()
					}
					if err := s.Send(junk(s, i)); err != nil {
						return
					}
					tokens--
				}
			}()
		}
		synctest.Wait()
		select {
		case err := <-u.followed:
			u.followed <- err
		default:
			t.Fatalf("the follower still takes junk below the immutable tip: %d charged, violations %v", len(charged), u.cv.List())
		}
		if err := u.wait(); !errors.Is(err, network.ErrWasteful) {
			t.Fatalf("FollowCIP ended with %v, want ErrWasteful", err)
		}
		if errs := u.cv.List(); len(errs) != 1 || !errors.Is(errs[0], network.ErrWasteful) {
			t.Fatalf("violations %v, want the one ErrWasteful", errs)
		}
		if len(charged) != burst+1 || charged[0] != "immutable" {
			t.Fatalf("%d charged (%v…), want the burst and the one past it", len(charged), charged[:min(3, len(charged))])
		}
		if got := events.list(); len(got) != 0 {
			t.Fatalf("the node heard %v", got)
		}
	})
}

// Two RBs of one slot may announce the same EB (two leaders with the same
// mempool), and under the CIP's vote message a seat's vote on it is one
// vote, signed alike, filed under each RB. The CIP's streams name a vote
// by (slot, EB, voter): it is sent once, and the follower hears no repeat.
func TestCIPSendsAVoteFiledUnderTwoRBsOnce(t *testing.T) {
	n := newTestNet(t, 2)
	upstreamRelay := n.relay(t)
	e := newEB(t, 5)
	first := n.header(slotsPast-5, 0, e.announcement(), 0)
	second := n.header(slotsPast-5, 1, e.announcement(), 0)
	for _, h := range []*block.Header{first, second} {
		if err := upstreamRelay.Announce(h); err != nil {
			t.Fatal(err)
		}
		if _, err := upstreamRelay.Votes([]block.Vote{{RbHash: h.Hash(), VoterSeat: 2, Signature: fillSig(9)}}); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := notify.NewService(notify.ServiceOptions{Relay: upstreamRelay})
	if err != nil {
		t.Fatal(err)
	}
	r := n.relay(t)
	u := followCIP(t, r)
	u.serveBy(t, svc)
	eventually(t, "the vote heard", func() bool {
		return len(r.VotesFor(first.Hash()))+len(r.VotesFor(second.Hash())) > 0
	})
	// A later vote on the stream shows the follower got past the first.
	later := n.header(slotsPast-4, 0, newEB(t, 6).announcement(), 0)
	if err := upstreamRelay.Announce(later); err != nil {
		t.Fatal(err)
	}
	if _, err := upstreamRelay.Votes([]block.Vote{{RbHash: later.Hash(), VoterSeat: 2, Signature: fillSig(10)}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the later vote heard", func() bool { return len(r.VotesFor(later.Hash())) == 1 })
	if errs := u.cv.List(); len(errs) > 0 {
		t.Fatalf("violations: %v", errs)
	}
}
