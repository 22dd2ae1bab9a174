package capacity

import (
	"cmp"
	"slices"
	"time"
)

// ReplayText is Replay.Model.
const ReplayText = "an ideal network on the run's own chain: the run's RBs at their slots and its txs offered when " +
	"they were admitted, first in first out; an RB certifies the EB of the RB before it when it comes minCertGap slots " +
	"or more after it, else carries a full RB body of the oldest waiting txs; every RB announces an EB of as many of " +
	"the oldest waiting txs as one holds (EB and RB body counted in txs of the mean size); no vote missed, no tx late " +
	"to a leader; a tx's latency is from its offer to the start of the slot of the block that puts it on chain"

// Offer is a tx offered to the network: At, from the system start, and
// whether its latency is Counted (it was offered in the measured span).
type Offer struct {
	At      time.Duration
	Counted bool
}

// Replay is the latency an ideal network gives a run's own txs on the
// run's own RBs (ReplayText). Beside the measured latency it tells the
// nodes' delay from the chain's: a run's p95 depends on its leader
// schedule and, below capacity, on the queue that the schedule's long
// gaps and early RBs leave behind full EBs, which the latency model (no
// queue) leaves out and this takes as they came.
type Replay struct {
	Model string `json:"model"`
	// Txs counts the counted txs the ideal network put on chain by the
	// chain's last RB, Waiting those it had not.
	Txs     int   `json:"txs"`
	Waiting int   `json:"waiting"`
	P50Ms   int64 `json:"p50Ms"`
	P95Ms   int64 `json:"p95Ms"`
}

// Replay puts offers, first come first placed, on a chain of RBs at
// rbSlots, ascending, as an ideal network of m's limits would, and gives
// the counted ones' latency. It says false when it placed no counted tx.
func (m Model) Replay(rbSlots []uint64, offers []Offer) (Replay, bool) {
	return m.replay(rbSlots, byOfferTime(offers))
}

// byOfferTime is a copy of offers, sorted by their time.
func byOfferTime(offers []Offer) []Offer {
	return slices.SortedStableFunc(slices.Values(offers), func(a, b Offer) int { return cmp.Compare(a.At, b.At) })
}

// replay is Replay of offers already sorted by their time.
func (m Model) replay(rbSlots []uint64, offers []Offer) (Replay, bool) {
	slot := m.Params.SlotLength()
	gap := uint64(max(m.Params.MinCertGap, 0))
	var latencies []int64
	next, arrived := 0, 0 // offers[next:arrived] are waiting
	place := func(n int, at time.Duration) {
		for _, o := range offers[next : next+n] {
			if o.Counted {
				latencies = append(latencies, (at - o.At).Milliseconds())
			}
		}
		next += n
	}
	announced, pending := uint64(0), 0 // the slot of the last RB, and its EB's txs
	for i, s := range rbSlots {
		start := time.Duration(s) * slot
		for arrived < len(offers) && offers[arrived].At < start {
			arrived++
		}
		if i > 0 && pending > 0 && s-announced >= gap {
			place(pending, start) // a CertRB: the EB's closure, no body of its own
		} else {
			place(min(m.RBTxs, arrived-next), start)
		}
		pending, announced = min(m.EBTxs, arrived-next), s
	}
	r := Replay{Model: ReplayText, Txs: len(latencies)}
	for _, o := range offers[next:] {
		if o.Counted {
			r.Waiting++
		}
	}
	if len(latencies) == 0 {
		return r, false
	}
	slices.Sort(latencies)
	r.P50Ms, r.P95Ms = medianAndP95(latencies)
	return r, true
}
