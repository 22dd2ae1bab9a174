package load

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/capacity"
)

// mempoolQueries is how many GET /api/mempool the final check has in
// flight at once.
const mempoolQueries = 8

// InFlightGrace is how long to wait, after the firehose stopped, for its
// last txs to reach every node's chain: two slots and the expected time of
// five blocks, slotsPerBlock slots each (1/f).
func InFlightGrace(slotLength time.Duration, slotsPerBlock float64) time.Duration {
	return 2*slotLength + time.Duration(5*slotsPerBlock*float64(slotLength))
}

// AwaitInFlight polls the nodes until every one reports an empty mempool
// and the same number of txs on chain, and says whether they did before
// grace had passed (or ctx ended).
func (f *Firehose) AwaitInFlight(ctx context.Context, grace time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	for {
		if txsSettled(apiclient.PollStatuses(ctx, f.apis)) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// txsSettled: every node answered, with an empty mempool and the same
// number of txs on chain.
func txsSettled(polls []apiclient.StatusPoll) bool {
	for _, p := range polls {
		if p.Status == nil || p.Status.Mempool.Txs != 0 || p.Status.TxsOnChain != polls[0].Status.TxsOnChain {
			return false
		}
	}
	return true
}

// Settle is the final check, made once the firehose has stopped and while
// the nodes still run: where every admitted tx ended up. It reads every
// node's chain (a few GET /api/blocks a node) and asks the mempools only
// about the txs not on every chain, so it takes seconds however many txs
// there are. clock dates the blocks for the latency; span, when set, is
// the measured span, for the latency of the txs first sent in it.
//
// The nodes keep forging while they are asked, so txs move from the
// mempools onto the chains meanwhile. The mempools are asked between two
// walks of the chains: a tx that left every mempool before it was asked
// for is on some chain by the second walk, by which the txs are placed.
// That walk is returned, for the rest of the report.
func (f *Firehose) Settle(ctx context.Context, clock consensus.Clock, span *Span) (*Report, []ChainWalk) {
	start := time.Now()
	// A last POST without an answer may have been admitted.
	for _, c := range f.chains {
		_, _ = f.resolvePending(ctx, f.apis[c.node], c) // a query error leaves it pending, so not counted
	}
	mempools := map[[32]byte]mempoolAnswer{}
	first := WalkChains(ctx, f.apis)
	f.askMempools(ctx, first, f.notOnEveryChain(Answered(first), mempools), mempools)
	final := WalkChains(ctx, f.apis)
	// A tx on every chain at the first walk and not at the second was
	// rolled back meanwhile: its mempools are asked now.
	f.askMempools(ctx, final, f.notOnEveryChain(Answered(final), mempools), mempools)

	r := f.newReport()
	chains := Answered(final)
	var dating string // the node whose chain dates the txs for the latency
	for n, w := range final {
		switch {
		case w.Err != nil:
			r.Problems = append(r.Problems, fmt.Sprintf("%s did not answer the final check: %v", f.nodeName(n), w.Err))
		case dating == "":
			dating = f.nodeName(n)
		}
	}
	var failed []error
	for _, answer := range mempools {
		if answer.err != nil {
			failed = append(failed, answer.err)
		}
	}
	if len(failed) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d txs' mempool queries failed, e.g. %v", len(failed), failed[0]))
	}
	var latencies, withRefusals, inSpan []time.Duration
	var txs, bytes int
	for _, c := range f.chains {
		if c.stopped != "" {
			r.StoppedChains = append(r.StoppedChains, fmt.Sprintf("%s (to %s) stopped: %s", c.name, f.nodeName(c.node), c.stopped))
		}
		r.RejectedTxs += c.givenUp
		for _, p := range c.pending[:c.sentPending()] { // sent, not admitted: its last answer says why
			switch p.answer {
			case answerRefused:
				r.RefusedAtStop++
			case answerRejected:
				r.RejectedTxs++
			default:
				r.UnansweredAtStop++
			}
		}
		for _, tx := range c.txs() {
			txs, bytes = txs+1, bytes+tx.Size
			r.Offers = append(r.Offers, capacity.Offer{At: tx.Admitted.Sub(clock.Start), Counted: span != nil && span.Contains(tx.Sent)})
			switch placeTx(chains, mempools, tx.Hash) {
			case txOnEveryChain:
				r.OnChain++
				r.OnChainBytes += uint64(tx.Size)
				latency := submitToChain(chains[0], clock, tx)
				latencies = append(latencies, latency)
				withRefusals = append(withRefusals, latency+tx.Admitted.Sub(tx.Sent))
				if span != nil && span.Contains(tx.Sent) {
					inSpan = append(inSpan, latency)
				}
			case txInMempool:
				r.InMempoolAtEnd++
			case txOnSomeChains:
				r.OnSomeChains++
			case txUnchecked:
				r.Unchecked++
			default:
				r.Lost++
			}
		}
	}
	if sum := r.Admitted + r.RejectedTxs + r.RefusedAtStop + r.UnansweredAtStop; sum != r.Submitted {
		// A tx the accounting above lost track of: say so, never hide it.
		r.Problems = append(r.Problems, fmt.Sprintf("%d txs submitted, but %d admitted, rejected, refused or unanswered", r.Submitted, sum))
	}
	if txs > 0 {
		r.MeanTxBytes = float64(bytes) / float64(txs)
	}
	if r.OfferedBytes > 0 {
		r.OnChainTxkBPerSecond = r.OfferedTxkBPerSecond * float64(r.OnChainBytes) / float64(r.OfferedBytes)
	}
	if len(latencies) > 0 {
		r.Latency = newLatency(latencies, fmt.Sprintf(latencyMeasured, dating))
		r.LatencyWithRefusals = newLatency(withRefusals, latencyWithRefusalsMeasured)
	}
	if len(inSpan) > 0 {
		r.LatencyInSpan = newLatency(inSpan, fmt.Sprintf(latencyMeasured, dating))
	}
	r.CheckMs = time.Since(start).Milliseconds()
	return r, final
}

// txPlacement is where the final check found an admitted tx.
type txPlacement int

const (
	txLost         txPlacement = iota // on no chain, in no mempool
	txOnEveryChain                    // on the chain of every node that answered
	txInMempool                       // else in some node's mempool
	txOnSomeChains                    // else on the chain of some nodes only
	txUnchecked                       // no chain answered, or no mempool could say
)

// placeTx says where the tx with this hash is, from the chains of the nodes
// that answered and the mempools' answers about the txs not on all of them.
func placeTx(chains []*WalkedChain, mempools map[[32]byte]mempoolAnswer, hash [32]byte) txPlacement {
	if len(chains) == 0 {
		return txUnchecked
	}
	on := 0
	for _, c := range chains {
		if _, ok := c.txs[hash]; ok {
			on++
		}
	}
	answer := mempools[hash]
	switch {
	case on == len(chains):
		return txOnEveryChain
	case answer.held:
		return txInMempool
	case on > 0:
		return txOnSomeChains
	case answer.err != nil:
		return txUnchecked
	}
	return txLost
}

// mempoolAnswer is what the mempools said of a tx: some holds it, or none
// that answered does and err says why one did not.
type mempoolAnswer struct {
	held bool
	err  error
}

// notOnEveryChain are the admitted txs that are not on every one of chains
// and that the mempools were not yet asked about.
func (f *Firehose) notOnEveryChain(chains []*WalkedChain, asked map[[32]byte]mempoolAnswer) []admittedTx {
	if len(chains) == 0 {
		return nil // no node answered: none to ask
	}
	var txs []admittedTx
	for _, c := range f.chains {
		for _, tx := range c.txs() {
			if _, ok := asked[tx.Hash]; !ok && placeTx(chains, nil, tx.Hash) != txOnEveryChain {
				txs = append(txs, tx)
			}
		}
	}
	return txs
}

// askMempools asks the mempools of the nodes whose walk answered about
// each tx, a few txs at once, and records the answers by tx hash.
func (f *Firehose) askMempools(ctx context.Context, walks []ChainWalk, txs []admittedTx, answers map[[32]byte]mempoolAnswer) {
	got := make([]mempoolAnswer, len(txs))
	var queries errgroup.Group
	queries.SetLimit(mempoolQueries)
	for i, tx := range txs {
		queries.Go(func() error {
			got[i] = f.inSomeMempool(ctx, walks, tx.id())
			return nil
		})
	}
	_ = queries.Wait() // the errors are in the answers
	for i, tx := range txs {
		answers[tx.Hash] = got[i]
	}
}

// inSomeMempool asks the nodes whose walk answered, one after another,
// whether their mempool holds the tx with this tx id.
func (f *Firehose) inSomeMempool(ctx context.Context, walks []ChainWalk, txID [32]byte) mempoolAnswer {
	var answer mempoolAnswer
	for n, w := range walks {
		if w.Err != nil {
			continue
		}
		in, err := f.apis[n].InMempool(ctx, txID)
		switch {
		case err != nil:
			answer.err = fmt.Errorf("%s: %w", f.nodeName(n), err)
		case in:
			return mempoolAnswer{held: true}
		}
	}
	return answer
}

// newReport is the report's counts of the submissions, and how fast the
// firehose went.
func (f *Firehose) newReport() *Report {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	r := &Report{
		Rate:         f.opts.Rate,
		Chains:       len(f.chains),
		Submitted:    s.Submitted,
		Admitted:     s.Admitted,
		Rejected:     map[string]uint64{},
		Refused:      map[string]uint64{},
		SubmitErrors: s.SubmitErrors,
		Resubmitted:  s.Resubmitted,
	}
	for reason, count := range s.Rejected {
		r.Rejected[reason] = count
	}
	for reason, count := range s.Refused {
		r.Refused[reason] = count
	}
	for node, count := range s.Dropped {
		if r.DroppedBy == nil {
			r.DroppedBy = map[string]uint64{}
		}
		r.DroppedBy[node] = count
		r.DroppedByNodes += count
	}
	if span := s.LastSent.Sub(s.FirstSent).Seconds(); span > 0 {
		r.OfferedPerSecond = float64(s.Submitted-1) / span
	}
	r.TxSize, r.OfferedBytes = f.opts.TxSize.String(), s.SubmittedBytes
	if s.Submitted > 0 {
		r.OfferedTxkBPerSecond = r.OfferedPerSecond * float64(s.SubmittedBytes) / float64(s.Submitted) / 1000
	}
	if s.Built > 0 {
		r.BuildMicros = float64(s.BuildTime.Microseconds()) / float64(s.Built)
	}
	if s.Posts > 0 {
		r.SubmitMillis = float64(s.PostTime.Microseconds()) / 1000 / float64(s.Posts)
		r.TxsPerPost = float64(s.PostedTxs) / float64(s.Posts)
	}
	return r
}
