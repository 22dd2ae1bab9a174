package load

import (
	"math"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
)

// Latency is how long the firehose's txs took from submission to the
// chain, over the txs on every node's chain.
type Latency struct {
	// Measured says what was measured, in words.
	Measured string `json:"measured"`
	Txs      int    `json:"txs"`
	P50Ms    int64  `json:"p50Ms"`
	P95Ms    int64  `json:"p95Ms"`
	MaxMs    int64  `json:"maxMs"`
}

// latencyMeasured is Latency.Measured from the admission; %s names the
// node whose chain dated the blocks.
const latencyMeasured = "from the start of the POST by which a node admitted a tx to the start of the slot of the block that applied it " +
	"(the RB that carried it, or the CertRB that certified its EB) on %s's chain; " +
	"a slot start precedes the block's forging and diffusion"

// latencyWithRefusalsMeasured is Latency.Measured from the first POST.
const latencyWithRefusalsMeasured = "as the latency, but from the firehose's first POST of the tx: the time a node's edge refused it (503) before admitting it included"

// submitToChain is the time from tx's admitted POST to the start of the
// slot of the block of c that applied it; tx must be on c.
func submitToChain(c *WalkedChain, clock consensus.Clock, tx admittedTx) time.Duration {
	return clock.SlotStart(c.Blocks[c.txs[tx.Hash].block].Slot).Sub(tx.Admitted)
}

// newLatency sums up latencies (at least one), measured as measured says.
// The caller formats measured, where go vet checks the format against its
// arguments.
func newLatency(latencies []time.Duration, measured string) *Latency {
	ms := make([]int64, len(latencies))
	for i, d := range latencies {
		ms[i] = d.Milliseconds()
	}
	slices.Sort(ms)
	return &Latency{
		Measured: measured,
		Txs:      len(ms),
		P50Ms:    (ms[(len(ms)-1)/2] + ms[len(ms)/2]) / 2, // the median

		P95Ms: nearestRank(ms, 0.95),
		MaxMs: ms[len(ms)-1],
	}
}

// nearestRank is the q-quantile (0 < q ≤ 1) of a sorted, non-empty list:
// the least value with at least a fraction q of the list at or below it.
func nearestRank(sorted []int64, q float64) int64 {
	return sorted[max(int(math.Ceil(q*float64(len(sorted))))-1, 0)]
}
