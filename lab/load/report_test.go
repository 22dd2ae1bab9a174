package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestReportAccountsForEveryTx: every tx a chain submitted is counted once
// in the report, as admitted or by the answer to its last POST when the
// load stopped — rejected (400), refused for now (503) or unanswered —
// and the first line of the printed report says so in a sum that adds up.
func TestReportAccountsForEveryTx(t *testing.T) {
	tooLarge := fmt.Errorf("%w: 20000 bytes, max 16384", ledger.ErrTxTooLarge)
	for _, tt := range []struct {
		name string
		// run makes the chain's steps, changing the node between them.
		run  func(f *Firehose, c *txChain, n *fakeAPINode)
		want Report // Submitted, Admitted, RejectedTxs, RefusedAtStop, UnansweredAtStop
	}{
		{"admitted", func(f *Firehose, c *txChain, n *fakeAPINode) {
			stepOnce(f, c)
			stepOnce(f, c)
		}, Report{Submitted: 2, Admitted: 2}},
		{"refused when the load stopped", func(f *Firehose, c *txChain, n *fakeAPINode) {
			stepOnce(f, c)
			n.set(func(n *fakeAPINode) { n.refuse = 1 })
			stepOnce(f, c) // 503: it would go again after its Retry-After
		}, Report{Submitted: 2, Admitted: 1, RefusedAtStop: 1}},
		{"refused, then admitted", func(f *Firehose, c *txChain, n *fakeAPINode) {
			n.set(func(n *fakeAPINode) { n.refuse = 1 })
			stepOnce(f, c)
			c.retryAt = time.Time{} // the Retry-After has passed
			stepOnce(f, c)
		}, Report{Submitted: 1, Admitted: 1}},
		{"rejected until the chain stopped", func(f *Firehose, c *txChain, n *fakeAPINode) {
			stepOnce(f, c)
			n.set(func(n *fakeAPINode) { n.rejectN, n.reject = 100, tooLarge })
			for range 3 {
				stepOnce(f, c) // the third finds the chain stopped
			}
		}, Report{Submitted: 2, Admitted: 1, RejectedTxs: 1}},
		{"rejected while its node was behind, then admitted", func(f *Firehose, c *txChain, n *fakeAPINode) {
			stepOnce(f, c)
			n.set(func(n *fakeAPINode) { n.rejectN, n.reject = 1, fmt.Errorf("%w: x#0", ledger.ErrInputNotInUTxO) })
			stepOnce(f, c)
			stepOnce(f, c)
		}, Report{Submitted: 2, Admitted: 2}},
		{"unanswered, and admitted after all", func(f *Firehose, c *txChain, n *fakeAPINode) {
			n.set(func(n *fakeAPINode) { n.unanswered = 1 })
			stepOnce(f, c) // the final check finds it in the mempool
		}, Report{Submitted: 1, Admitted: 1}},
		{"unanswered, at no node", func(f *Firehose, c *txChain, n *fakeAPINode) {
			stepOnce(f, c)
			n.set(func(n *fakeAPINode) { n.lose = 1 })
			stepOnce(f, c)
		}, Report{Submitted: 2, Admitted: 1, UnansweredAtStop: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, fakes := fakeDevnet(t, 1, 1, Options{Rate: 1, MaxRejectionsInARow: 2})
			tt.run(f, f.chains[0], fakes[0])
			r, _ := f.Settle(context.Background(), consensus.Clock{Start: time.Now(), SlotLength: time.Millisecond}, nil)
			w := tt.want
			if r.Submitted != w.Submitted || r.Admitted != w.Admitted || r.RejectedTxs != w.RejectedTxs ||
				r.RefusedAtStop != w.RefusedAtStop || r.UnansweredAtStop != w.UnansweredAtStop || len(r.Problems) != 0 {
				t.Errorf("submitted %d = admitted %d + rejected %d + refused %d + unanswered %d, problems %q; want %d = %d + %d + %d + %d",
					r.Submitted, r.Admitted, r.RejectedTxs, r.RefusedAtStop, r.UnansweredAtStop, r.Problems,
					w.Submitted, w.Admitted, w.RejectedTxs, w.RefusedAtStop, w.UnansweredAtStop)
			}
			checkPrintedSum(t, r)
			checkFormatted(t, r)
		})
	}
}

// TestReportAddsUpWithRefusalsAtTheStop runs the firehose over a node that
// starts refusing every batch for now (503, Retry-After 2 s) once it has
// admitted some, and stops the load once each chain was refused: each then
// holds a batch refused and not yet sent again, and the report counts its
// txs, so that what was submitted adds up.
func TestReportAddsUpWithRefusalsAtTheStop(t *testing.T) {
	const chains = 5
	f, fakes := fakeDevnet(t, 1, chains, Options{Rate: 200, UpPoll: 10 * time.Millisecond})
	// The chains' txs refused at the stop: a batch each.
	refused := uint64(chains * f.batch)
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Hang) // a bound, not the stop
	defer cancel()
	go func() {
		defer cancel()
		refusing := false
		for ctx.Err() == nil {
			c := f.Counts()
			var refusals uint64
			for _, n := range c.Refused {
				refusals += n
			}
			switch {
			case !refusing && c.Admitted >= 20:
				fakes[0].set(func(n *fakeAPINode) { n.refuse = 1 << 30 })
				refusing = true
			case refusals == refused: // every chain waits out its Retry-After
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	f.Run(ctx)
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("not every chain was refused after %v, a hang: %+v", waittest.Hang, f.Counts())
	}

	r, _ := f.Settle(context.Background(), consensus.Clock{Start: time.Now(), SlotLength: time.Millisecond}, nil)
	if r.RefusedAtStop != refused || r.Admitted < 20 || r.RejectedTxs != 0 || r.UnansweredAtStop != 0 || len(r.Problems) != 0 ||
		r.Admitted+r.RejectedTxs+r.RefusedAtStop+r.UnansweredAtStop != r.Submitted {
		t.Errorf("submitted %d = admitted %d + rejected %d + refused %d + unanswered %d (problems %q); want %d refused, a batch of %d per chain",
			r.Submitted, r.Admitted, r.RejectedTxs, r.RefusedAtStop, r.UnansweredAtStop, r.Problems, refused, f.batch)
	}
	checkPrintedSum(t, r)
	checkFormatted(t, r)
}

// checkPrintedSum: the report's first line gives every tx submitted as the
// sum of its outcomes, then every admitted tx as the sum of its places, and
// both sums hold.
func checkPrintedSum(t *testing.T, r *Report) {
	t.Helper()
	var out bytes.Buffer
	r.Print(&out)
	line, _, _ := strings.Cut(out.String(), "\n")
	want := fmt.Sprintf("txs: %d submitted = %d admitted + %d rejected + %d refused (503) when the load stopped + %d unanswered; "+
		"admitted = %d on every chain + %d in a mempool + %d on some chains + %d lost (checked in ",
		r.Submitted, r.Admitted, r.RejectedTxs, r.RefusedAtStop, r.UnansweredAtStop, r.OnChain, r.InMempoolAtEnd, r.OnSomeChains, r.Lost)
	if !strings.HasPrefix(line, want) {
		t.Errorf("the report's first line\n%s\nwant it to begin\n%s", line, want)
	}
	if r.Admitted+r.RejectedTxs+r.RefusedAtStop+r.UnansweredAtStop != r.Submitted ||
		r.OnChain+r.InMempoolAtEnd+r.OnSomeChains+r.Lost+r.Unchecked != r.Admitted {
		t.Errorf("the sums do not hold: %s", line)
	}
}

// checkFormatted: no text of the report, in its JSON or printed, holds a
// fmt error ("%!d(string=…)", "%!(EXTRA …)"): a format and its arguments
// that do not match, which go vet misses when the format is a variable.
func checkFormatted(t *testing.T, r *Report) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r.Print(&out)
	for what, text := range map[string]string{"JSON": string(b), "printed report": out.String()} {
		if i := strings.Index(text, "%!"); i >= 0 {
			t.Errorf("the %s holds a fmt error: …%s…", what, text[max(0, i-80):min(len(text), i+80)])
		}
	}
}
