package load

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/leiosnode/leiosnode/consensus/capacity"
)

// Report is what became of a firehose's txs. Every tx submitted is
// counted once in Admitted, RejectedTxs, RefusedAtStop or
// UnansweredAtStop, which add up to Submitted; every admitted tx once in
// OnChain, InMempoolAtEnd, OnSomeChains, Lost or Unchecked, which add up to
// Admitted — a tx its node dropped and the firehose sent again included,
// once.
type Report struct {
	Rate   float64 `json:"rate"`   // offered, tx/s
	Chains int     `json:"chains"` // one per funded address
	// Submitted counts the distinct txs sent; a tx sent again after a
	// refusal or a POST without an answer counts once.
	Submitted uint64 `json:"submitted"`
	Admitted  uint64 `json:"admitted"`
	// RejectedTxs, RefusedAtStop and UnansweredAtStop are the txs sent and
	// never admitted, by the answer to their last POST: a 400 (a ledger
	// rule: their chain stopped on it, or the load stopped before they went
	// again); a 503 (refused for now, not rejected: the load stopped within
	// their Retry-After); none, and the final check found them at no node.
	RejectedTxs      uint64 `json:"rejectedTxs"`
	RefusedAtStop    uint64 `json:"refusedAtStop"`
	UnansweredAtStop uint64 `json:"unansweredAtStop"`
	// Rejected counts the 400 answers by the ledger rule they name: answers,
	// not txs (a tx may be rejected and admitted later, as when its node
	// was behind), and of a chain's batch only the first tx's rejection,
	// the txs after it spending its output.
	Rejected map[string]uint64 `json:"rejected"`
	// Refused counts the 503 answers by the reason the node gave (its edge
	// refusing txs while it is behind, a full mempool), one a tx: a batch
	// refused whole counts each of its txs. Each was sent again after the
	// answer's Retry-After.
	Refused map[string]uint64 `json:"refused"`
	// SubmitErrors counts the POSTs and resync queries without an answer.
	SubmitErrors uint64 `json:"submitErrors"`
	// DroppedByNodes counts the admitted txs that their node dropped: a
	// node killed with them in its mempool, before they reached a chain or
	// another node's mempool, lost them — the node's loss, not the
	// firehose's. The firehose, as a wallet would, found each in no
	// mempool and on no chain for 2 s, and sent it again; Resubmitted
	// counts those admitted again. DroppedBy names the nodes.
	DroppedByNodes uint64            `json:"droppedByNodes"`
	DroppedBy      map[string]uint64 `json:"droppedBy,omitempty"`
	Resubmitted    uint64            `json:"resubmitted"`
	// OnChain: admitted txs on the chain of every node that answered the
	// final check.
	OnChain uint64 `json:"onChain"`
	// InMempoolAtEnd: the others still in some node's mempool.
	InMempoolAtEnd uint64 `json:"inMempoolAtEnd"`
	// OnSomeChains: the others on the chain of some nodes only.
	OnSomeChains uint64 `json:"onSomeChains"`
	// Lost: admitted txs that never reached the chain (and are in no
	// mempool), even after the firehose sent the dropped ones again: what a
	// user with a 202 would have lost.
	Lost uint64 `json:"lost"`
	// Unchecked: admitted txs the final check could not place, because the
	// nodes did not answer (see Problems).
	Unchecked uint64 `json:"unchecked,omitempty"`
	// CheckMs is how long the final check took.
	CheckMs int64 `json:"checkMs"`
	// Latency is the time from submission to the chain of the txs OnChain;
	// absent when there are none.
	Latency *Latency `json:"latency,omitempty"`
	// LatencyWithRefusals is the same from the first POST of each tx: what
	// a wallet waited in all, its refusals included.
	LatencyWithRefusals *Latency `json:"latencyWithRefusals,omitempty"`
	// LatencyInSpan is the same over the txs first sent in the measured
	// span Settle was given; absent without one, or when there are none.
	LatencyInSpan *Latency `json:"latencyInSpan,omitempty"`
	// MeanTxBytes is the mean size of the admitted txs.
	MeanTxBytes float64 `json:"meanTxBytes,omitempty"`
	// Offers are the admitted txs, when each was admitted, those first sent
	// in the measured span counted: what CheckCapacity's ideal network is
	// offered. Not written out: one entry a tx.
	Offers []capacity.Offer `json:"-"`
	// Capacity is the run beside its network's structural capacity; absent
	// when whoever ran it did not measure it (the devnet's report has its
	// own).
	Capacity *CapacityCheck `json:"capacity,omitempty"`
	// OfferedPerSecond is the distinct txs sent per second, from the first
	// to the last: below Rate when the firehose could not keep up, mostly
	// because the nodes' answers came too slowly (BenchmarkFirehoseCeiling
	// measures what it can offer nodes that admit at once). BuildMicros is
	// its own work per tx, building and signing it; SubmitMillis a POST's
	// mean round trip, and TxsPerPost the txs a POST carried on average.
	OfferedPerSecond float64 `json:"offeredPerSecond"`
	BuildMicros      float64 `json:"buildMicros"`
	SubmitMillis     float64 `json:"submitMillis"`
	TxsPerPost       float64 `json:"txsPerPost"`
	// TxSize is the distribution of the txs' sizes (Options.TxSize); ""
	// for plain payments. OfferedBytes are the bytes of the distinct txs
	// sent, OnChainBytes of those OnChain.
	TxSize       string `json:"txSize,omitempty"`
	OfferedBytes uint64 `json:"offeredBytes"`
	OnChainBytes uint64 `json:"onChainBytes"`
	// OfferedTxkBPerSecond is OfferedPerSecond in kB (1,000 bytes) of txs,
	// CIP-0164's TxkB/s; OnChainTxkBPerSecond its share that reached every
	// chain (by OnChainBytes over OfferedBytes).
	OfferedTxkBPerSecond float64 `json:"offeredTxkBPerSecond"`
	OnChainTxkBPerSecond float64 `json:"onChainTxkBPerSecond"`
	// Settled says the nodes reported empty mempools and equal tx counts on
	// chain before the final check, within the grace after the firehose
	// stopped.
	Settled bool `json:"settled"`
	// StoppedChains says which chains stopped before the end, and why.
	StoppedChains []string `json:"stoppedChains,omitempty"`
	// Problems says why the final check is incomplete.
	Problems []string `json:"problems,omitempty"`
}

// Print writes the report's lines: what became of the txs (the loss),
// the latencies, the firehose's speed, the rejections, what went wrong,
// and the run beside the network's capacity when it was measured.
func (r *Report) Print(out io.Writer) {
	fmt.Fprintf(out, "txs: %d submitted = %d admitted + %d rejected + %d refused (503) when the load stopped + %d unanswered; "+
		"admitted = %d on every chain + %d in a mempool + %d on some chains + %d lost",
		r.Submitted, r.Admitted, r.RejectedTxs, r.RefusedAtStop, r.UnansweredAtStop, r.OnChain, r.InMempoolAtEnd, r.OnSomeChains, r.Lost)
	if r.Unchecked > 0 {
		fmt.Fprintf(out, " + %d unchecked", r.Unchecked)
	}
	fmt.Fprintf(out, " (checked in %s)\n", Seconds(r.CheckMs))
	if r.DroppedByNodes > 0 {
		fmt.Fprintf(out, "  %d admitted txs were dropped by their node (in no mempool and on no chain: %s); the firehose sent them again, %d admitted again\n",
			r.DroppedByNodes, CountsByName(r.DroppedBy), r.Resubmitted)
	}
	if l := r.Latency; l != nil {
		fmt.Fprintf(out, "  admission to on chain (the admitted POST to the slot start of the block that applied it): p50 %s, p95 %s, max %s over %d txs\n",
			Seconds(l.P50Ms), Seconds(l.P95Ms), Seconds(l.MaxMs), l.Txs)
	}
	if l := r.LatencyWithRefusals; l != nil {
		fmt.Fprintf(out, "  first POST to on chain (the refusals before admission included): p50 %s, p95 %s, max %s\n",
			Seconds(l.P50Ms), Seconds(l.P95Ms), Seconds(l.MaxMs))
	}
	sizes := "plain payments"
	if r.TxSize != "" {
		sizes = "tx size " + r.TxSize
	}
	fmt.Fprintf(out, "  the firehose offered %.1f tx/s of %g, %.1f TxkB/s (%s), %.1f TxkB/s of it on every chain: %.0f µs to build and sign a tx, %.2f ms a POST of %.1f txs\n",
		r.OfferedPerSecond, r.Rate, r.OfferedTxkBPerSecond, sizes, r.OnChainTxkBPerSecond, r.BuildMicros, r.SubmitMillis, r.TxsPerPost)
	for _, reason := range slices.Sorted(maps.Keys(r.Rejected)) {
		fmt.Fprintf(out, "  400 answers: %d× %s\n", r.Rejected[reason], reason)
	}
	for _, line := range append(r.StoppedChains, r.Problems...) {
		fmt.Fprintln(out, "  "+line)
	}
	if c := r.Capacity; c != nil {
		c.Print(out)
	}
}

// CountsByName spells counts as "node-0 3, node-2 1", by name, as the
// report's lines do.
func CountsByName(counts map[string]uint64) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", name, counts[name]))
	}
	return strings.Join(parts, ", ")
}

// Seconds spells milliseconds as seconds, e.g. 1.25 s, as the report's
// lines do.
func Seconds(ms int64) string { return fmt.Sprintf("%.2f s", float64(ms)/1000) }
