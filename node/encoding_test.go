package node

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/multiformats/go-multiaddr"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/leios/protocolset"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/notify"
)

// A network certifies EBs on each vote message the genesis may choose,
// whichever protocol set carries the votes: three pools, each a third of
// the stake, so a certificate needs all three votes (τ 0.75). Under
// "mixed" one node speaks the CIP's set, one the prototype's and one both,
// so the first two's votes reach each other only through the third,
// converted from one set's vote to the other's. Every node adopts a CertRB
// whose certificate is in the genesis's encoding.
//
// Votes are also taken from the wire, as a peer of the network sees them —
// from /leios/votes/1 where a node serves the CIP's set, from
// /leios/notify/1 where one serves the prototype's — and checked with the
// genesis's committee keys, by bls alone: on a network of the CIP's
// encoding every one verifies over concat(slot_no, eb_hash), the slot 8
// bytes big-endian; on one of the prototype's, over 0x5820 ‖ rb_hash and
// not over the CIP's message.
func TestEncodingsCertifyUnderEachProtocolSet(t *testing.T) {
	for _, enc := range []block.Encoding{block.EncodingCIP, block.EncodingPrototype} {
		for _, set := range []string{"cip", "prototype", "mixed"} {
			t.Run(enc.String()+" encoding, "+set+" protocols", func(t *testing.T) {
				certifyAndCapture(t, enc, set)
			})
		}
	}
}

func certifyAndCapture(t *testing.T, enc block.Encoding, set string) {
	const nodes = 3
	var g *consensus.Genesis
	configs := testNet(t, nodes, 100*time.Millisecond, func(gen *consensus.Genesis) {
		gen.Leios.Encoding = enc
		gen.ActiveSlotsCoeff = "0.1" // a block every second or so: often past the certification gap
		gen.SecurityParam = 5
		gen.Leios.RBMaxBodyBytes = 700 // three of the test's txs: the rest go to an EB
		gen.Leios.LVote, gen.Leios.MinCertGap = 5, 7
		gen.SystemStart = time.Now().Add(time.Second).UTC()
		g = gen
	})
	protocols := map[string][]protocolset.Set{
		"cip":       {protocolset.CIP, protocolset.CIP, protocolset.CIP},
		"prototype": {protocolset.Prototype, protocolset.Prototype, protocolset.Prototype},
		"mixed":     protocolset.All(), // cip, prototype, both: the devnet's mixed
	}[set]
	for i, cfg := range configs {
		cfg.LeiosProtocols, cfg.HTTPAddr = protocols[i], ""
	}
	committee, err := consensus.NewCommittee(g)
	must(t, err)
	ns, stop := runNodes(t, configs)
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	capture := newVoteCapture(t)
	for i, p := range protocols {
		addr := peer.AddrInfo{ID: ns[i].host.ID(), Addrs: []multiaddr.Multiaddr{multiaddr.StringCast(configs[i].ListenAddrs[0])}}
		if p.CIP() && capture.cip == nil {
			capture.follow(ctx, addr, notify.VotesSpec())
		}
		if p.Prototype() && capture.proto == nil {
			capture.follow(ctx, addr, notify.Spec())
		}
	}

	// Txs into node 0's mempool, six more — twice what an RB carries — at
	// each of its tip changes, until every node's chain holds a CertRB.
	txs := payments(t, 250)
	deadline := time.After(3 * time.Minute) // a hang; certifying takes seconds
	var certRB *block.Block
	for certRB == nil {
		changed := ns[0].chain.TipChanged()
		certRB = commonCertRB(t, ns)
		if certRB != nil {
			break
		}
		for range min(6, len(txs)) {
			must(t, ns[0].mempool.Add(ctx, txs[0]))
			txs = txs[1:]
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no CertRB on every node's chain after 3 minutes, a hang (%s)", capture)
		}
	}
	if cert := certRB.Body.Certificate; cert.Encoding != enc {
		t.Fatalf("the CertRB's certificate is in the %s encoding on a %s network", cert.Encoding, enc)
	}
	// The certificate took every seat's vote, so each was relayed: the
	// capturing peers have seen votes by now, or shortly.
	for start := time.Now(); !capture.enough(); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("votes captured from the wire: %s", capture)
		}
	}
	cancel()
	capture.wait()
	capture.check(t, committee, enc)
	t.Logf("block %d certifies an EB; %s", certRB.Header.BlockNumber, capture)
}

// commonCertRB is a block with a certificate that every node's chain
// holds at the same height, or nil.
func commonCertRB(t *testing.T, ns []*Node) *block.Block {
	t.Helper()
	tip := ns[0].chain.Tip().BlockNumber
	for number := uint64(1); number <= tip; number++ {
		blk, err := ns[0].chain.BlockByNumber(number)
		if err != nil || blk.Body.Certificate == nil {
			continue
		}
		everywhere := true
		for _, n := range ns[1:] {
			other, err := n.chain.BlockByNumber(number)
			everywhere = everywhere && err == nil && other.Hash() == blk.Hash()
		}
		if everywhere {
			return blk
		}
	}
	return nil
}

// voteCapture is a peer outside the network's topology that follows one
// node's CIP votes stream and another's (or the same one's) prototype
// LeiosNotify stream, keeping the votes and, from LeiosNotify, the headers
// they name.
type voteCapture struct {
	host  host.Host
	cip   *protocol.Session
	proto *protocol.Session
	wg    sync.WaitGroup

	mu        sync.Mutex
	cipVotes  []notify.LeiosVote
	protoVote []block.Vote
	headers   map[block.Hash]*block.Header
	errs      []error // what ended a stream, other than the test's end
}

func newVoteCapture(t *testing.T) *voteCapture {
	t.Helper()
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	must(t, err)
	h, err := libp2p.New(libp2p.Identity(key), libp2p.NoListenAddrs, libp2p.DisableRelay(), libp2p.DisableMetrics())
	must(t, err)
	t.Cleanup(func() { h.Close() })
	return &voteCapture{host: h, headers: make(map[block.Hash]*block.Header)}
}

// follow opens spec's stream to target as its client and keeps what
// arrives, granting more as it goes, until ctx ends.
func (c *voteCapture) follow(ctx context.Context, target peer.AddrInfo, spec *protocol.Spec) {
	if err := c.host.Connect(ctx, target); err != nil {
		c.fail(fmt.Errorf("connecting to %s: %w", target.ID, err))
		return
	}
	st, err := c.host.NewStream(ctx, target.ID, libp2pprotocol.ID(spec.ID()))
	if err != nil {
		c.fail(fmt.Errorf("opening %s to %s: %w", spec.ID(), target.ID, err))
		return
	}
	s := protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Client, Stream: st})
	tokens := spec.ID() == notify.VotesSpec().ID()
	if tokens {
		c.cip = s
	} else {
		c.proto = s
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer s.Close()
		if err := c.read(ctx, s, tokens); err != nil && ctx.Err() == nil {
			c.fail(fmt.Errorf("%s: %w", spec.ID(), err))
		}
	}()
}

func (c *voteCapture) read(ctx context.Context, s *protocol.Session, tokens bool) error {
	// The prototype's pipelined requests, one renewed at each notification
	// read; or the CIP's grants, as its client makes them: GrantsAhead of
	// GrantSize, one renewed at each GrantSize read.
	ask := func() error { return s.Send(&notify.MsgRequestNext{}) }
	initial, per := notify.MaxInFlight, 1
	if tokens {
		ask = func() error { return s.Send(&notify.MsgLeiosRequestNext{N: notify.GrantSize}) }
		initial, per = notify.GrantsAhead, notify.GrantSize
	}
	for range initial {
		if err := ask(); err != nil {
			return err
		}
	}
	for read := 1; ; read++ {
		m, err := s.Recv(ctx)
		if err != nil {
			return err
		}
		c.mu.Lock()
		switch m := m.(type) {
		case *notify.MsgLeiosVote:
			c.cipVotes = append(c.cipVotes, m.Vote)
		case *notify.MsgVotes:
			c.protoVote = append(c.protoVote, m.Votes...)
		case *notify.MsgBlockAnnouncement:
			c.headers[m.Header.Hash()] = m.Header
		}
		c.mu.Unlock()
		if read%per != 0 {
			continue
		}
		if err := ask(); err != nil {
			return err
		}
	}
}

func (c *voteCapture) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}

// enough reports whether each stream followed brought a vote, or ended.
func (c *voteCapture) enough() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.errs) > 0 || ((c.cip == nil || len(c.cipVotes) > 0) && (c.proto == nil || len(c.protoVote) > 0))
}

func (c *voteCapture) wait() { c.wg.Wait() }

func (c *voteCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%d votes captured from /leios/votes/1, %d from /leios/notify/1, stream errors %v", len(c.cipVotes), len(c.protoVote), c.errs)
}

// check verifies every captured vote with the genesis's committee keys: a
// CIP stream's over concat(slot_no, eb_hash) exactly when the network's
// encoding is the CIP's, a prototype stream's over the network's message
// for the header it names, which on a CIP network is that same
// concatenation of the header's slot and announced EB.
func (c *voteCapture) check(t *testing.T, committee *consensus.Committee, enc block.Encoding) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errs) > 0 {
		t.Fatalf("capturing votes: %v", c.errs)
	}
	// The CIP's message, written here from the CIP's text, not taken from
	// the code under test.
	cipMessage := func(slot uint64, eb block.Hash) []byte {
		return append(binary.BigEndian.AppendUint64(nil, slot), eb[:]...)
	}
	verify := func(seat uint16, sig block.Bytes48, msg []byte) bool {
		s, ok := committee.Seat(seat)
		if !ok {
			t.Fatalf("a vote of seat %d, of a committee of %d", seat, committee.Size())
		}
		signature, err := bls.SignatureFromBytes(sig[:])
		if err != nil {
			t.Fatalf("seat %d's signature: %v", seat, err)
		}
		return s.VotingKey.Verify(msg, signature)
	}
	for _, v := range c.cipVotes {
		if ok := verify(v.VoterID, v.Signature, cipMessage(v.Slot, v.EbHash)); ok != (enc == block.EncodingCIP) {
			t.Errorf("/leios/votes/1, seat %d on EB %s at slot %d: verifies over the CIP's message: %v, on a %s network", v.VoterID, v.EbHash.Short(), v.Slot, ok, enc)
		}
	}
	for _, v := range c.protoVote {
		h, ok := c.headers[v.RbHash]
		if !ok || h.Announcement == nil {
			t.Fatalf("/leios/notify/1 brought seat %d's vote for RB %s before an announcement of an EB by it", v.VoterSeat, v.RbHash.Short())
		}
		msg := append([]byte{0x58, 0x20}, v.RbHash[:]...)
		if enc == block.EncodingCIP {
			msg = cipMessage(h.Slot, h.Announcement.EbHash)
		}
		if !verify(v.VoterSeat, v.Signature, msg) {
			t.Errorf("/leios/notify/1, seat %d on RB %s: does not verify over the %s message %x", v.VoterSeat, v.RbHash.Short(), enc, msg)
		}
	}
}
