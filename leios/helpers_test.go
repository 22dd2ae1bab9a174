package leios

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/consensustest"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/txcache"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testLimits admit the small EBs of the tests and full-size ones.
var testLimits = block.DefaultEBLimits

// testNet is a network of one pool holding all the stake and the one
// committee seat, with slots of one second from a day ago.
type testNet struct {
	validator *consensus.Validator
	issuer    ed25519.PrivateKey
	voter     *consensus.Voter
}

func newTestNet(tb testing.TB) *testNet {
	tb.Helper()
	pool := consensustest.NewPool("pool", 1)
	g := consensustest.Genesis(pool)
	g.SystemStart = time.Now().Add(-24 * time.Hour)
	v := consensustest.Validator(tb, g)
	voter, err := v.Committee().NewVoter(pool.IssuerVKey(), pool.Voting)
	if err != nil {
		tb.Fatal(err)
	}
	return &testNet{validator: v, issuer: pool.Issuer, voter: voter}
}

// testOptions are a pipeline's options for tests: a fresh directory, small
// caches, and every header accepted (the tests' headers are stand-ins; the
// relay's validation is notify's to test).
func testOptions(tb testing.TB) Options {
	return Options{
		Dir:            tb.TempDir(),
		DBCacheBytes:   4 << 20,
		Limits:         testLimits,
		TxCache:        txcache.Options{TxCapacity: 1 << 16},
		Validator:      newTestNet(tb).validator,
		ValidateHeader: func(*block.Header) error { return nil },
		Logger:         quietLogger(),
	}
}

// openPipeline opens a pipeline that is closed when the test ends; it is
// not running.
func openPipeline(tb testing.TB, opts Options) *Pipeline {
	tb.Helper()
	p, err := Open(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := p.Close(); err != nil {
			tb.Error(err)
		}
	})
	return p
}

// runPipeline runs p until the test ends, and returns the context it runs
// under. Stores the test closes after p stops are registered for cleanup
// before this is called.
func runPipeline(tb testing.TB, p *Pipeline) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
	return ctx
}

// fataler is the part of testing.TB (and rapid.T) the helpers need.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// rbHash is a stand-in RB hash for an announcement at slot.
func rbHash(slot uint64, eb *blocktest.EB) block.Hash {
	var b [40]byte
	binary.BigEndian.PutUint64(b[:], slot)
	h := eb.Body.Hash()
	copy(b[8:], h[:])
	return block.HashBytes(b[:])
}

func peerID(name string) peer.ID { return peer.ID("peer-" + name) }

// harness drives a pipeline step by step, playing its peers: the fetch
// logic's requests are planned explicitly (plan) and answered from the
// world of EBs it knows (reply) or failed, with the consistency check after
// every step. Nothing runs in the background.
type harness struct {
	t     fataler
	p     *Pipeline
	f     *fetch.Fetcher
	now   time.Time
	world map[block.Hash]*blocktest.EB
}

func newHarness(t testing.TB, configure ...func(*Options)) *harness {
	h := &harness{t: t, now: time.Unix(1_000_000, 0), world: make(map[block.Hash]*blocktest.EB)}
	opts := testOptions(t)
	opts.Now = func() time.Time { return h.now }
	for _, c := range configure {
		c(&opts)
	}
	h.p = openPipeline(t, opts)
	h.f = h.p.fetcher
	return h
}

func (h *harness) check() {
	h.t.Helper()
	if err := h.p.CheckConsistency(); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) must(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
	h.check()
}

func (h *harness) learn(eb *blocktest.EB) { h.world[eb.Body.Hash()] = eb }

func (h *harness) announce(slot uint64, eb *blocktest.EB) block.Point {
	h.t.Helper()
	h.learn(eb)
	h.must(h.p.insertAnnouncement(slot, rbHash(slot, eb), eb.Announcement()))
	return eb.Point(slot)
}

func (h *harness) peerUp(ids ...peer.ID) {
	for _, id := range ids {
		h.f.PeerUp(id)
	}
	h.check()
}

func (h *harness) peerDown(id peer.ID) {
	h.f.PeerDown(id)
	h.check()
}

func (h *harness) offerBody(id peer.ID, p block.Point) {
	h.f.BlockOffer(id, p, h.world[p.Hash].Body.Size())
	h.check()
}

func (h *harness) offerClosure(id peer.ID, p block.Point) {
	h.f.BlockTxsOffer(id, p)
	h.check()
}

// forge puts an EB through the handlers as the forge does: announcement,
// body, validated txs.
func (h *harness) forge(slot uint64, eb *blocktest.EB) block.Point {
	h.t.Helper()
	p := h.announce(slot, eb)
	h.must(h.p.insertBody(p, eb.Body, nil))
	h.must(h.p.insertTxs(p, block.HashTxs(eb.Txs), true))
	return p
}

// plan runs the decision logic once and returns what it issued.
func (h *harness) plan() []*fetch.Request {
	h.t.Helper()
	reqs, _ := h.f.Plan()
	h.check()
	return reqs
}

// reply answers r from the world, as an honest peer, and ends it.
func (h *harness) reply(r *fetch.Request) {
	h.t.Helper()
	eb := h.world[r.Point.Hash]
	var reply fetch.Reply
	switch r.Kind {
	case fetch.RequestBody:
		reply.Body = eb.Body
	case fetch.RequestTxs:
		for _, off := range r.Offsets {
			reply.Txs = append(reply.Txs, block.HashTx(eb.Txs[off]))
		}
	}
	h.must(h.f.Deliver(r, reply))
}

// fail ends r without a reply: the peer failed it.
func (h *harness) fail(r *fetch.Request) {
	h.f.Abandon(r)
	h.check()
}

// replyAll answers every request, in order.
func (h *harness) replyAll(reqs []*fetch.Request) {
	h.t.Helper()
	for _, r := range reqs {
		h.reply(r)
	}
}

// drain plans and answers until nothing more is issued; it returns every
// request issued on the way.
func (h *harness) drain() []*fetch.Request {
	h.t.Helper()
	var all []*fetch.Request
	for range 1000 {
		reqs := h.plan()
		if len(reqs) == 0 {
			return all
		}
		all = append(all, reqs...)
		h.replyAll(reqs)
	}
	h.t.Fatal("the fetch logic never settles")
	return nil
}

func (h *harness) complete(p block.Point) bool {
	h.t.Helper()
	info, ok, err := h.p.db.PointInfo(p)
	if err != nil {
		h.t.Fatal(err)
	}
	return ok && info.Complete()
}

// txRequests counts, per tx hash, how often it was requested.
func txRequests(reqs []*fetch.Request) map[block.Hash]int {
	n := make(map[block.Hash]int)
	for _, r := range reqs {
		for _, tx := range r.TxHashes {
			n[tx]++
		}
	}
	return n
}

func kinds(reqs []*fetch.Request) (bodies, txs []*fetch.Request) {
	for _, r := range reqs {
		if r.Kind == fetch.RequestBody {
			bodies = append(bodies, r)
		} else {
			txs = append(txs, r)
		}
	}
	return bodies, txs
}

func offsetsOf(reqs []*fetch.Request) []int {
	var out []int
	for _, r := range reqs {
		out = append(out, r.Offsets...)
	}
	slices.Sort(out)
	return out
}
