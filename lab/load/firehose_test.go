package load

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestFirehoseStep drives one chain against a fake node through the
// answers a node gives, one step at a time.
func TestFirehoseStep(t *testing.T) {
	tests := []struct {
		name string
		// run makes the steps, changing the node between them.
		run func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode)
		// want: admitted txs, stopped (a part of the reason, "" = runs),
		// and the stats.
		admitted int
		stopped  string
		stats    txStats
	}{
		{
			name: "admitted one after another",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				for range 3 {
					stepOnce(f, c)
				}
			},
			admitted: 3,
			stats:    txStats{Submitted: 3, Admitted: 3},
		},
		{
			name: "refused for now: the same tx goes again after the Retry-After",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) { n.refuse = 2 })
				first, _ := c.next(f.params)
				for range 2 {
					stepOnce(f, c)
					if wait := time.Until(c.retryAt); wait < 1500*time.Millisecond || wait > 2*time.Second {
						t.Fatalf("after a refusal with Retry-After 2: next try in %v", wait)
					}
					posts := n.postCount()
					stepOnce(f, c)
					if n.postCount() != posts {
						t.Fatal("sent again before the Retry-After")
					}
					c.retryAt = time.Time{} // the Retry-After has passed
				}
				if c.pending[0].tx != first || len(c.admitted) != 0 {
					t.Errorf("after two 503s: pending changed or admitted %d", len(c.admitted))
				}
				stepOnce(f, c)
				if len(c.admitted) != 1 || c.admitted[0].Hash != first.Hash() {
					t.Errorf("the tx admitted after the 503s is not the one first sent")
				}
			},
			admitted: 1,
			stats:    txStats{Submitted: 1, Admitted: 1, Refused: map[string]uint64{"queue-delay": 2}},
		},
		{
			name: "a passing rejection while the parent is in the mempool",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				stepOnce(f, c)
				n.set(func(n *fakeAPINode) {
					n.rejectN, n.reject = 1, fmt.Errorf("%w: fee 1, minimum 2", ledger.ErrFeeTooSmall)
				})
				stepOnce(f, c)
				stepOnce(f, c)
			},
			admitted: 2,
			stats:    txStats{Submitted: 2, Admitted: 2, Rejected: map[string]uint64{"ledger: fee below minimum": 1}},
		},
		{
			name: "a passing rejection while the parent is on chain",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				stepOnce(f, c)
				if err := forgeAll(n); err != nil {
					t.Fatal(err)
				}
				n.set(func(n *fakeAPINode) { n.rejectN, n.reject = 1, fmt.Errorf("%w: slot 9, ttl 8", ledger.ErrExpired) })
				stepOnce(f, c)
				stepOnce(f, c)
			},
			admitted: 2,
			stats:    txStats{Submitted: 2, Admitted: 2, Rejected: map[string]uint64{"ledger: tx expired (slot ≥ ttl)": 1}},
		},
		{
			name: "an admission without an answer is found in the mempool",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) { n.unanswered = 1 })
				stepOnce(f, c) // admitted, but no answer
				stepOnce(f, c) // 400 duplicate: the node holds it, so it is in
				stepOnce(f, c)
			},
			admitted: 2,
			stats:    txStats{Submitted: 2, Admitted: 2, SubmitErrors: 1},
		},
		{
			name: "an admission without an answer is found on chain",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) { n.unanswered = 1 })
				stepOnce(f, c)
				if err := forgeAll(n); err != nil {
					t.Fatal(err)
				}
				stepOnce(f, c) // 400: its input is spent, by itself
				stepOnce(f, c)
			},
			admitted: 2,
			stats:    txStats{Submitted: 2, Admitted: 2, SubmitErrors: 1, Rejected: map[string]uint64{"ledger: input not in UTxO": 1}},
		},
		{
			name: "the node drops its txs: they go again, the same txs",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				stepOnce(f, c)
				stepOnce(f, c)
				sent := c.txs()
				n.restart()    // a kill: the mempool is gone
				stepOnce(f, c) // 400: the pending tx's parent is gone, and both are nowhere
				if len(c.resubmit) != 0 || c.missingSince.IsZero() {
					t.Fatalf("missing for the first time: %d to resubmit already", len(c.resubmit))
				}
				time.Sleep(time.Millisecond) // DropConfirm passes: they are still nowhere
				stepOnce(f, c)               // 400 again: both dropped
				if len(c.resubmit) != 2 || len(c.admitted) != 0 || c.head != ledger.GenesisTxIn(c.address) {
					t.Fatalf("after the drop: %d to resubmit, %d admitted, head %v", len(c.resubmit), len(c.admitted), c.head)
				}
				stepOnce(f, c) // the first again
				stepOnce(f, c) // the second again
				stepOnce(f, c) // the pending one
				if got := c.txs(); len(got) != 3 || got[0] != sent[0] || got[1] != sent[1] {
					t.Errorf("after resubmitting: %d txs, want the two first ones unchanged and one more", len(got))
				}
			},
			admitted: 3,
			stats:    txStats{Submitted: 3, Admitted: 3, Resubmitted: 2, Dropped: map[string]uint64{"node-0": 2}, Rejected: map[string]uint64{"ledger: input not in UTxO": 2}},
		},
		{
			name: "txs missing for a moment, as after a rollback, are not dropped",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				stepOnce(f, c)
				stepOnce(f, c)
				sent := c.txs()
				n.restart()               // gone from the mempool…
				stepOnce(f, c)            // 400: missing
				for _, tx := range sent { // …and back before DropConfirm
					if _, err := f.apis[0].Submit(context.Background(), tx.tx.Bytes()); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Millisecond)
				stepOnce(f, c) // the pending tx goes in
				if !c.missingSince.IsZero() || len(c.resubmit) != 0 {
					t.Errorf("still missing since %v, %d to resubmit", c.missingSince, len(c.resubmit))
				}
			},
			admitted: 3,
			stats:    txStats{Submitted: 3, Admitted: 3, Rejected: map[string]uint64{"ledger: input not in UTxO": 1}},
		},
		{
			name: "a node behind the others: the chain waits, nothing dropped",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				stepOnce(f, c)
				// The node rejects the next tx's input although the first is
				// in its mempool: resync finds the parent there and goes on.
				n.set(func(n *fakeAPINode) { n.rejectN, n.reject = 1, fmt.Errorf("%w: x#0", ledger.ErrInputNotInUTxO) })
				stepOnce(f, c)
				stepOnce(f, c)
			},
			admitted: 2,
			stats:    txStats{Submitted: 2, Admitted: 2, Rejected: map[string]uint64{"ledger: input not in UTxO": 1}},
		},
		{
			name: "a rejection that stays: the chain stops",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				n.set(func(n *fakeAPINode) {
					n.rejectN, n.reject = 100, fmt.Errorf("%w: 20000 bytes, max 16384", ledger.ErrTxTooLarge)
				})
				for range 7 {
					stepOnce(f, c)
				}
			},
			stopped: "rejected 3 times in a row: ledger: tx larger than max tx size: 20000 bytes",
			stats:   txStats{Submitted: 1, Rejected: map[string]uint64{"ledger: tx larger than max tx size": 3}},
		},
		{
			name: "a node that cannot say where the chain stands: it goes on",
			run: func(t *testing.T, f *Firehose, c *txChain, n *fakeAPINode) {
				stepOnce(f, c)
				n.set(func(n *fakeAPINode) {
					n.rejectN, n.reject, n.failQueries = 1, fmt.Errorf("%w: x#0", ledger.ErrInputNotInUTxO), true
				})
				stepOnce(f, c)
				n.set(func(n *fakeAPINode) { n.failQueries = false })
				stepOnce(f, c)
			},
			admitted: 2,
			stats:    txStats{Submitted: 2, Admitted: 2, SubmitErrors: 1, Rejected: map[string]uint64{"ledger: input not in UTxO": 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, fakes := fakeDevnet(t, 1, 1, Options{Rate: 1, MaxRejectionsInARow: 3, DropConfirm: time.Millisecond / 2})
			c := f.chains[0]
			tt.run(t, f, c, fakes[0])
			if len(c.admitted) != tt.admitted {
				t.Errorf("%d admitted, want %d", len(c.admitted), tt.admitted)
			}
			if tt.stopped == "" && c.stopped != "" || !strings.Contains(c.stopped, tt.stopped) {
				t.Errorf("stopped %q, want %q", c.stopped, tt.stopped)
			}
			if tt.stats.Rejected == nil {
				tt.stats.Rejected = map[string]uint64{}
			}
			if tt.stats.Dropped == nil {
				tt.stats.Dropped = map[string]uint64{}
			}
			if got := f.stats; !equalStats(got, tt.stats) {
				t.Errorf("stats %+v, want %+v", got, tt.stats)
			}
			// The node holds exactly the admitted txs, in order.
			mempool := fakes[0].mempoolTxs()
			onChain := int(fakes[0].txsOnChain)
			if len(mempool)+onChain != len(c.admitted) {
				t.Errorf("the node holds %d txs (%d on chain), the firehose counts %d admitted", len(mempool)+onChain, onChain, len(c.admitted))
			}
		})
	}
}

// stepOnce is one turn of a chain, as the submitter takes it.
func stepOnce(f *Firehose, c *txChain) {
	if c.stopped == "" {
		f.step(context.Background(), f.apis[c.node], []*txChain{c})
	}
}

func equalStats(a, b txStats) bool {
	if a.Submitted != b.Submitted || a.Admitted != b.Admitted || !maps.Equal(a.Refused, b.Refused) || a.SubmitErrors != b.SubmitErrors ||
		len(a.Rejected) != len(b.Rejected) || a.Resubmitted != b.Resubmitted || len(a.Dropped) != len(b.Dropped) {
		return false
	}
	for node, n := range a.Dropped {
		if b.Dropped[node] != n {
			return false
		}
	}
	for reason, n := range a.Rejected {
		if b.Rejected[reason] != n {
			return false
		}
	}
	return true
}

// TestPaced: steps come at the interval; the steps a stall delayed are
// made up at once after it, as far as they are at most the lag late; a slow
// step is followed by the next at once, never two at a time; and pacing
// ends with the context or when step says so. On virtual time, so each
// step's start is known to the nanosecond whatever the machine.
func TestPaced(t *testing.T) {
	const interval = 10 * time.Millisecond
	// run paces steps for span; a step takes what takes says and goes on
	// while it says so. It returns when each step began, from the start.
	run := func(span, lag time.Duration, takes func(call int) (time.Duration, bool)) (starts []time.Duration) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), span)
			defer cancel()
			start := time.Now()
			paced(ctx, interval, lag, func() bool {
				starts = append(starts, time.Since(start))
				d, goOn := takes(len(starts))
				time.Sleep(d)
				return goOn
			})
		})
		return starts
	}
	// every is the starts from from to to (included), one an interval.
	every := func(from, to time.Duration) (starts []time.Duration) {
		for at := from; at <= to; at += interval {
			starts = append(starts, at)
		}
		return starts
	}
	at := func(d time.Duration, n int) []time.Duration { return slices.Repeat([]time.Duration{d}, n) }
	stallFirst := func(call int) (time.Duration, bool) {
		if call == 1 {
			return 20 * interval, true
		}
		return 0, true
	}
	// The spans end 5 ms past a due step, so the context's end never ties with one.
	const span = 305 * time.Millisecond
	for _, tt := range []struct {
		name  string
		lag   time.Duration
		takes func(call int) (time.Duration, bool)
		want  []time.Duration
	}{
		{"fast steps", time.Second, func(int) (time.Duration, bool) { return 0, true }, every(0, 300*time.Millisecond)},
		// The 20 steps due at 10…200 ms all start at 200 ms, then on schedule.
		{"a stall of 200 ms made up", time.Second, stallFirst,
			slices.Concat(at(0, 1), at(200*time.Millisecond, 20), every(210*time.Millisecond, 300*time.Millisecond))},
		// Only the steps due at 150…200 ms, at most 50 ms late, are made up.
		{"a stall made up for 50 ms", 5 * interval, stallFirst,
			slices.Concat(at(0, 1), at(200*time.Millisecond, 6), every(210*time.Millisecond, 300*time.Millisecond))},
		// Each step takes three intervals: the next starts as it ends.
		{"slow steps", time.Second, func(int) (time.Duration, bool) { return 3 * interval, true },
			[]time.Duration{0, 30 * time.Millisecond, 60 * time.Millisecond, 90 * time.Millisecond, 120 * time.Millisecond,
				150 * time.Millisecond, 180 * time.Millisecond, 210 * time.Millisecond, 240 * time.Millisecond,
				270 * time.Millisecond, 300 * time.Millisecond}},
		{"a step saying stop", time.Second, func(int) (time.Duration, bool) { return 0, false }, at(0, 1)},
	} {
		if got := run(span, tt.lag, tt.takes); !slices.Equal(got, tt.want) {
			t.Errorf("%s: steps started at %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestFirehoseRun runs the firehose over two fake nodes that forge blocks
// of their mempools until it has had 40 txs admitted, then makes the final
// check: every admitted tx is on chain or in a mempool, the counts match
// the nodes, nothing is lost, and no more was sent than the rate allows.
// The run ends on the count, not on the clock, so that a busy machine
// only makes it longer.
func TestFirehoseRun(t *testing.T) {
	const rate, chains, admitted = 200, 5, 40
	f, fakes := fakeDevnet(t, 2, chains, Options{Rate: rate, UpPoll: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer cancel()
		for start := time.Now(); f.Counts().Admitted < admitted && time.Since(start) < waittest.Hang; {
			time.Sleep(time.Millisecond)
		}
	}()
	forged := make(chan error, 1)
	go func() {
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				forged <- nil
				return
			case <-ticker.C:
			}
			if err := forgeAll(fakes...); err != nil {
				forged <- err
				return
			}
		}
	}()
	start := time.Now()
	f.Run(ctx)
	took := time.Since(start)
	if n := f.Counts().Admitted; n < admitted {
		t.Fatalf("%d txs admitted of the %d awaited after %v, a hang", n, admitted, took)
	}
	if err := <-forged; err != nil {
		t.Fatal(err)
	}

	r, _ := f.Settle(context.Background(), consensus.Clock{Start: start, SlotLength: time.Millisecond}, nil)
	t.Logf("report: %+v", r)
	checkFormatted(t, r)
	if most := uint64(rate*took.Seconds()) + chains*uint64(f.batch); r.Submitted < admitted || r.Submitted > most { // a batch per chain may start the run
		t.Errorf("%d submitted in %v at %d/s: want at least the %d admitted, at most %d", r.Submitted, took, rate, admitted, most)
	}
	if r.Admitted != r.Submitted || len(r.Rejected) != 0 || r.Lost != 0 || r.OnSomeChains != 0 || r.Unchecked != 0 || len(r.Problems) != 0 || len(r.StoppedChains) != 0 {
		t.Errorf("report %+v: want every submitted tx admitted and none lost", r)
	}
	inMempools := uint64(len(fakes[0].mempoolTxs()) + len(fakes[1].mempoolTxs()))
	if r.OnChain != fakes[0].txsOnChain || r.OnChain != fakes[1].txsOnChain || r.InMempoolAtEnd != inMempools || r.OnChain+r.InMempoolAtEnd != r.Admitted {
		t.Errorf("on chain %d, in mempool %d; the nodes hold %d and %d on chain, %d in mempools", r.OnChain, r.InMempoolAtEnd, fakes[0].txsOnChain, fakes[1].txsOnChain, inMempools)
	}
	// Every chain had its turns, on its own node.
	for _, c := range f.chains {
		if len(c.admitted) < 2 {
			t.Errorf("%s: only %d admitted", c.name, len(c.admitted))
		}
	}
	if r.Latency == nil || r.Latency.Txs != int(r.OnChain) || !strings.Contains(r.Latency.Measured, "node-0's chain") {
		t.Errorf("latency %+v, want one over the %d txs on chain, dated by node-0", r.Latency, r.OnChain)
	}
	if r.OfferedPerSecond <= 0 || r.BuildMicros <= 0 || r.SubmitMillis <= 0 {
		t.Errorf("the firehose's speed: offered %.1f tx/s, building %.0f µs, posting %.2f ms", r.OfferedPerSecond, r.BuildMicros, r.SubmitMillis)
	}
}

// TestSettle places admitted txs on chain, in mempools, on some chains only
// or nowhere, and checks the final check finds each where it is.
func TestSettle(t *testing.T) {
	f, fakes := fakeDevnet(t, 2, 4, Options{Rate: 1})
	// Chains 0, 2 go to node-0; 1, 3 to node-1. Three txs each, on both
	// chains.
	stepAll := func(times int) {
		for range times {
			for _, c := range f.chains {
				stepOnce(f, c)
			}
		}
	}
	stepAll(3)
	if err := forgeAll(fakes...); err != nil {
		t.Fatal(err)
	}
	// Two more each: node-0 forges a block of its mempool that node-1 does
	// not get; node-1 keeps its own in its mempool.
	stepAll(2)
	if err := fakes[0].adopt(fakes[0].mempoolTxs()); err != nil {
		t.Fatal(err)
	}
	// One more each, then node-0 loses its mempool: chains 0 and 2 lose
	// their last tx.
	stepAll(1)
	fakes[0].restart()

	clock := consensus.Clock{Start: time.Now(), SlotLength: time.Millisecond}
	r, _ := f.Settle(context.Background(), clock, nil)
	want := Report{
		Rate: 1, Chains: 4, Submitted: 24, Admitted: 24, Rejected: map[string]uint64{},
		OnChain:        12, // 3 per chain
		InMempoolAtEnd: 6,  // chains 1, 3: 3 each in node-1's mempool
		OnSomeChains:   4,  // chains 0, 2: 2 each on node-0's chain only
		Lost:           2,  // chains 0, 2: 1 each, in the mempool node-0 lost
	}
	checkFormatted(t, r)
	r.Problems, r.StoppedChains = nil, nil
	if !equalReports(*r, want) {
		t.Errorf("report\n%+v\nwant\n%+v", *r, want)
	}
	if r.Latency == nil || r.Latency.Txs != 12 {
		t.Errorf("latency %+v, want one over the 12 txs on every chain", r.Latency)
	}
	if r.LatencyInSpan != nil {
		t.Errorf("latency in a span without one: %+v", r.LatencyInSpan)
	}
	var txs, bytes int // the admitted txs, lost ones included
	for _, c := range f.chains {
		for _, tx := range c.txs() {
			txs, bytes = txs+1, bytes+len(tx.tx.Bytes())
		}
	}
	if want := float64(bytes) / float64(txs); txs != 24 || r.MeanTxBytes != want {
		t.Errorf("mean tx size %v bytes, want %v over the %d admitted", r.MeanTxBytes, want, txs)
	}
	// A measured span from before the first tx sent: all of them; one
	// after the last: none.
	all := Span{From: time.Now().Add(-time.Hour), To: time.Now()}
	if r, _ := f.Settle(context.Background(), clock, &all); r.LatencyInSpan == nil || r.LatencyInSpan.Txs != 12 {
		t.Errorf("latency in a span of the whole run %+v, want the 12 txs'", r.LatencyInSpan)
	}
	later := Span{From: time.Now(), To: time.Now().Add(time.Hour)}
	if r, _ := f.Settle(context.Background(), clock, &later); r.LatencyInSpan != nil {
		t.Errorf("latency in a span after the txs: %+v", r.LatencyInSpan)
	}

	// A node that does not answer leaves the check to the others.
	fakes[1].server.Close()
	r, _ = f.Settle(context.Background(), clock, nil)
	if len(r.Problems) == 0 || !strings.Contains(r.Problems[0], "node-1 did not answer the final check") {
		t.Errorf("problems %q, want node-1 not answering", r.Problems)
	}
	// On node-0 alone: 5 of chains 0, 2 on chain, 3 of chains 1, 3.
	if r.OnChain != 16 || r.Lost != 8 || r.OnChain+r.InMempoolAtEnd+r.OnSomeChains+r.Lost+r.Unchecked != r.Admitted {
		t.Errorf("with node-1 down: %+v", r)
	}
}

func equalReports(a, b Report) bool {
	sa := txStats{Submitted: a.Submitted, Admitted: a.Admitted, Rejected: a.Rejected, Refused: a.Refused, SubmitErrors: a.SubmitErrors}
	sb := txStats{Submitted: b.Submitted, Admitted: b.Admitted, Rejected: b.Rejected, Refused: b.Refused, SubmitErrors: b.SubmitErrors}
	a.Rejected, b.Rejected, a.Refused, b.Refused = nil, nil, nil, nil
	a.Problems, b.Problems, a.StoppedChains, b.StoppedChains = nil, nil, nil, nil
	return equalStats(sa, sb) && a.Rate == b.Rate && a.Chains == b.Chains && a.OnChain == b.OnChain &&
		a.InMempoolAtEnd == b.InMempoolAtEnd && a.OnSomeChains == b.OnSomeChains && a.Lost == b.Lost && a.Unchecked == b.Unchecked && a.Settled == b.Settled
}

// TestInFlight: the wait for the last txs ends as soon as the nodes have
// empty mempools and equal counts on chain, and after the grace otherwise.
func TestInFlight(t *testing.T) {
	f, fakes := fakeDevnet(t, 2, 2, Options{Rate: 1})
	for _, c := range f.chains {
		stepOnce(f, c)
	}
	// The grace ends the wait: the caller's context would end it only
	// after a hang's ceiling.
	start := time.Now()
	if f.AwaitInFlight(waittest.Context(t), 300*time.Millisecond) {
		t.Error("settled with txs in the mempools")
	}
	if took := time.Since(start); took < 300*time.Millisecond || took >= waittest.Hang {
		t.Errorf("the wait took %v, want the grace of 300 ms", took)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = forgeAll(fakes...)
	}()
	if !f.AwaitInFlight(context.Background(), waittest.Hang) {
		t.Errorf("not settled after the block, within %v", waittest.Hang)
	}
}
