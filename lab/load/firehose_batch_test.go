package load

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestFirehoseBatches drives one chain sending batches of four txs, each
// spending the one before, against a fake node, through the answers a
// node gives a batch: every tx is counted once, in the stats and in the
// report's sum, the node holds exactly the txs counted admitted, in the
// chain's order, and the txs not admitted go again as they were.
func TestFirehoseBatches(t *testing.T) {
	const batch = 4
	tests := []struct {
		name string
		// run makes the steps, changing the node between them.
		run   func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode)
		stats txStats
		// pending are the chain's txs sent and not admitted at the end, by
		// their last answer: refused, rejected, unanswered.
		pending [3]uint64
	}{
		{
			name:  "admitted in one POST",
			run:   func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) { stepOnce(f, c) },
			stats: txStats{Submitted: 4, Admitted: 4, Posts: 1},
		},
		{
			name: "refused for room at the third: it and the fourth go again",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) { n.after, n.full = 2, 1 })
				stepOnce(f, c)
				if len(c.pending) != 2 || c.pending[0].answer != answerRefused || c.pending[1].answer != answerRefused {
					t.Fatalf("after the refusal: %d pending", len(c.pending))
				}
				if wait := time.Until(c.retryAt); wait <= 0 || wait > time.Second {
					t.Fatalf("next try in %v, want the Retry-After of 1 s", wait)
				}
				refused := []*chainTx{c.pending[0].tx, c.pending[1].tx}
				c.retryAt = time.Time{} // the Retry-After has passed
				stepOnce(f, c)          // the two again, and two more
				if got := c.admitted[2:4]; got[0].Hash != refused[0].hash || got[1].Hash != refused[1].hash {
					t.Error("the txs admitted after the refusal are not those refused")
				}
			},
			stats: txStats{Submitted: 6, Admitted: 6, Posts: 2, Refused: map[string]uint64{"mempool-full": 2}},
		},
		{
			name: "refused for room at the stop",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) { n.after, n.full = 1, 1 })
				stepOnce(f, c)
			},
			stats:   txStats{Submitted: 4, Admitted: 1, Posts: 1, Refused: map[string]uint64{"mempool-full": 3}},
			pending: [3]uint64{3, 0, 0},
		},
		{
			name: "the edge refuses the batch whole",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) { n.refuse = 1 })
				stepOnce(f, c)
			},
			stats:   txStats{Submitted: 4, Posts: 1, Refused: map[string]uint64{"queue-delay": 4}},
			pending: [3]uint64{4, 0, 0},
		},
		{
			name: "a passing rejection at the second: the rest are rejected for it, and go again",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) {
					n.after, n.rejectN, n.reject = 1, 1, fmt.Errorf("%w: fee 1, minimum 2", ledger.ErrFeeTooSmall)
				})
				stepOnce(f, c)
				if len(c.admitted) != 1 || len(c.pending) != 3 {
					t.Fatalf("after the rejection: %d admitted, %d pending", len(c.admitted), len(c.pending))
				}
				stepOnce(f, c) // the three again, and one more
			},
			// The first rejection alone counts: the others follow from it.
			stats: txStats{Submitted: 5, Admitted: 5, Posts: 2, Rejected: map[string]uint64{"ledger: fee below minimum": 1}},
		},
		{
			name: "a rejection at the stop",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) {
					n.after, n.rejectN, n.reject = 1, 1, fmt.Errorf("%w: fee 1, minimum 2", ledger.ErrFeeTooSmall)
				})
				stepOnce(f, c)
			},
			stats:   txStats{Submitted: 4, Admitted: 1, Posts: 1, Rejected: map[string]uint64{"ledger: fee below minimum": 1}},
			pending: [3]uint64{0, 3, 0},
		},
		{
			name: "a batch admitted without an answer: sent again, the node holds it",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) { n.unanswered = 1 })
				stepOnce(f, c)
				if !c.nodeDown || len(c.pending) != batch {
					t.Fatalf("after no answer: node down %v, %d pending", c.nodeDown, len(c.pending))
				}
				stepOnce(f, c)
			},
			stats: txStats{Submitted: 4, Admitted: 4, Posts: 2, SubmitErrors: 1},
		},
		{
			name: "a batch admitted without an answer and forged: the newest tells",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) { n.unanswered = 1 })
				stepOnce(f, c)
				// On chain, each tx's output is spent by the next but the
				// last's: the node rejects the first sent again, and the
				// chain finds the four in by the last.
				if err := forgeAll(n); err != nil {
					t.Fatal(err)
				}
				stepOnce(f, c)
				if len(c.admitted) != batch || len(c.resubmit) != 0 || !c.missingSince.IsZero() {
					t.Fatalf("after the resync: %d admitted, %d to send again, missing since %v", len(c.admitted), len(c.resubmit), c.missingSince)
				}
				stepOnce(f, c)
			},
			stats: txStats{Submitted: 8, Admitted: 8, Posts: 3, SubmitErrors: 1, Rejected: map[string]uint64{"ledger: input not in UTxO": 1}},
		},
		{
			name: "a batch without an answer at the stop",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) { n.lose = 1 })
				stepOnce(f, c)
			},
			stats:   txStats{Submitted: 4, Posts: 1, SubmitErrors: 1},
			pending: [3]uint64{0, 0, 4},
		},
		{
			name: "dropped txs go again in batches",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				stepOnce(f, c)
				stepOnce(f, c)
				n.restart()    // a kill: the mempool is gone
				stepOnce(f, c) // 400: missing
				time.Sleep(time.Millisecond)
				stepOnce(f, c) // 400 again: dropped
				if len(c.resubmit) != 2*batch {
					t.Fatalf("%d to send again, want %d", len(c.resubmit), 2*batch)
				}
				stepOnce(f, c) // four again
				stepOnce(f, c) // the other four
				stepOnce(f, c) // the pending ones
			},
			stats: txStats{Submitted: 12, Admitted: 12, Posts: 7, Resubmitted: 8, Dropped: map[string]uint64{"node-0": 8}, Rejected: map[string]uint64{"ledger: input not in UTxO": 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, fakes := fakeDevnet(t, 1, 1, Options{Rate: batch * 10, BatchWindow: 100 * time.Millisecond, MaxRejectionsInARow: 3, DropConfirm: time.Millisecond / 2})
			if f.batch != batch {
				t.Fatalf("a batch of %d txs, want %d", f.batch, batch)
			}
			c := f.chains[0]
			tt.run(t, f, c, fakes[0])
			for _, m := range []*map[string]uint64{&tt.stats.Rejected, &tt.stats.Refused, &tt.stats.Dropped} {
				if *m == nil {
					*m = map[string]uint64{}
				}
			}
			if got := f.stats; !equalStats(got, tt.stats) || got.Posts != tt.stats.Posts {
				t.Errorf("stats %+v, want %+v", got, tt.stats)
			}
			// The node holds exactly the admitted txs, in the chain's order.
			held := chainHashes(t, fakes[0])
			for _, tx := range fakes[0].mempoolTxs() {
				held = append(held, tx.Hash())
			}
			if len(held) != len(c.admitted) {
				t.Fatalf("the node holds %d txs, the firehose counts %d admitted", len(held), len(c.admitted))
			}
			for i, hash := range held {
				if hash != c.admitted[i].Hash {
					t.Fatalf("the node's tx %d is not the chain's", i)
				}
			}
			r, _ := f.Settle(context.Background(), consensus.Clock{Start: time.Now(), SlotLength: time.Millisecond}, nil)
			if got := [3]uint64{r.RefusedAtStop, r.RejectedTxs, r.UnansweredAtStop}; got != tt.pending || len(r.Problems) != 0 {
				t.Errorf("at the stop %d refused, %d rejected, %d unanswered (problems %q), want %v", got[0], got[1], got[2], r.Problems, tt.pending)
			}
			checkPrintedSum(t, r)
		})
	}
}

// chainHashes are the hashes of the txs on the fake node's chain, in
// order.
func chainHashes(t *testing.T, n *fakeAPINode) [][32]byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	var hashes [][32]byte
	for _, b := range n.blocks {
		for _, h := range append(b.Closure, b.Txs...) {
			hash, err := block.ParseHash(h)
			if err != nil {
				t.Fatal(err)
			}
			hashes = append(hashes, hash)
		}
	}
	return hashes
}

// TestBatchSizes: a chain sends its share of the rate every BatchWindow,
// at least one tx, at most MaxBatchTxs, and never more bytes than a node
// takes.
func TestBatchSizes(t *testing.T) {
	for _, tc := range []struct {
		rate     float64
		chains   int
		opts     Options
		batch    int
		interval time.Duration
	}{
		{3000, 30, Options{}, 10, 100 * time.Millisecond},
		{1, 1, Options{}, 1, time.Second},
		{20, 2, Options{}, 1, 100 * time.Millisecond},
		{3000, 30, Options{BatchWindow: time.Second}, 64, 640 * time.Millisecond},
		{3000, 30, Options{BatchWindow: time.Second, MaxBatchTxs: 1000}, 100, time.Second},
	} {
		tc.opts.Rate = tc.rate
		chains := make([]*txChain, tc.chains)
		for i := range chains {
			chains[i] = &txChain{}
		}
		f := newFirehose(ledger.DefaultParams(), []Node{{}}, chains, nil, tc.opts)
		if f.batch != tc.batch || f.interval != tc.interval {
			t.Errorf("%g tx/s over %d chains, %+v: %d txs every %v, want %d every %v", tc.rate, tc.chains, tc.opts, f.batch, f.interval, tc.batch, tc.interval)
		}
	}
	sizes := func(n int) []int { s := make([]int, 20); s[0], s[1] = n, n; return s }
	for _, tc := range []struct {
		sizes []int
		most  int
		want  int
	}{
		{sizes(200), 10, 10},
		{sizes(200), 30, 20},
		{sizes(maxBatchBytes / 2), 10, 2},
		{sizes(maxBatchBytes/2 + 1), 10, 1},
		{sizes(2 * maxBatchBytes), 10, 1}, // one alone, whatever its size
	} {
		for i := range tc.sizes {
			if tc.sizes[i] == 0 {
				tc.sizes[i] = 200
			}
		}
		if got := batchLen(tc.sizes, tc.most, func(n int) int { return n }); got != tc.want {
			t.Errorf("txs of %d, %d… bytes, at most %d: %d a batch, want %d", tc.sizes[0], tc.sizes[2], tc.most, got, tc.want)
		}
	}
}

// TestFirehoseNodePosts: one POST carries the batches of all a node's
// chains, as many as the node's bounds take, each chain judged on its own
// answers; once a POST is refused whole, the chains after it wait for the
// next step, their txs unsent.
func TestFirehoseNodePosts(t *testing.T) {
	const chains, batch = 3, 4
	newRun := func(t *testing.T) (*Firehose, *fakeAPINode) {
		f, fakes := fakeDevnet(t, 1, chains, Options{Rate: chains * batch * 10})
		if f.batch != batch {
			t.Fatalf("a batch of %d txs, want %d", f.batch, batch)
		}
		return f, fakes[0]
	}
	step := func(f *Firehose) { f.step(context.Background(), f.apis[0], f.chains) }
	admitted := func(f *Firehose) (n []int) {
		for _, c := range f.chains {
			n = append(n, len(c.admitted))
		}
		return n
	}

	t.Run("one POST, a refusal for room amid it", func(t *testing.T) {
		f, n := newRun(t)
		step(f)
		n.set(func(n *fakeAPINode) { n.after, n.full = batch+2, 1 })
		step(f)
		if got := admitted(f); !slices.Equal(got, []int{2 * batch, batch + 2, batch}) {
			t.Errorf("admitted %v: want the first chain's two batches, two of the second's, none of the third's second", got)
		}
		for j, c := range f.chains {
			if waits := !c.retryAt.IsZero(); waits != (j > 0) {
				t.Errorf("chain %d waits out a Retry-After: %v", j, waits)
			}
		}
		if s := f.stats; s.Posts != 2 || s.PostedTxs != 2*chains*batch || !maps.Equal(s.Refused, map[string]uint64{"mempool-full": batch + 2}) {
			t.Errorf("%d POSTs of %d txs, refused %v; want 2 of %d, the six txs after the full mempool refused", s.Posts, s.PostedTxs, s.Refused, 2*chains*batch)
		}
	})

	t.Run("POSTs split at the node's bounds, stopped by a refusal", func(t *testing.T) {
		f, n := newRun(t)
		f.postTxs = batch + 1 // a chain's batch a POST
		step(f)
		if s := f.stats; s.Posts != chains || s.Admitted != chains*batch {
			t.Fatalf("%d POSTs, %d admitted; want a POST a chain, all admitted", s.Posts, s.Admitted)
		}
		n.set(func(n *fakeAPINode) { n.refuse = 1 })
		step(f) // the first chain's POST is refused: the others wait
		if s := f.stats; s.Posts != chains+1 || s.Submitted != (chains+1)*batch {
			t.Fatalf("after a refusal: %d POSTs, %d submitted; want one more POST, the others' txs unsent", s.Posts, s.Submitted)
		}
		step(f) // the first waits out its Retry-After; the others go
		if got := admitted(f); !slices.Equal(got, []int{batch, 2 * batch, 2 * batch}) {
			t.Errorf("admitted %v", got)
		}
		r, _ := f.Settle(context.Background(), consensus.Clock{Start: time.Now(), SlotLength: time.Millisecond}, nil)
		if r.RefusedAtStop != batch || len(r.Problems) != 0 {
			t.Errorf("%d refused at the stop (problems %q), want the first chain's batch", r.RefusedAtStop, r.Problems)
		}
		checkPrintedSum(t, r)
	})
}
