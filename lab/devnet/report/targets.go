package report

import (
	"time"

	"github.com/leiosnode/leiosnode/lab/load"
)

// Targets are the run's figures over its measured span (from the system
// start plus the warm-up to the firehose's stop), the ones a sustained
// load is judged by: the rate the chain carried, EBs certified all along,
// mempools off their bound, the latency of admitted txs, none lost, and
// what the nodes' edges refused.
type Targets struct {
	// Measured says what was measured, in words.
	Measured string `json:"measured"`
	// WarmupS is the warm-up; FromS and ToS bound the span, in seconds
	// from the system start.
	WarmupS float64 `json:"warmupS"`
	FromS   float64 `json:"fromS"`
	ToS     float64 `json:"toS"`
	// OnChainPerSecond: the txs of the common chain's blocks whose slot
	// started in the span, per second. The firehose's rates: distinct txs
	// sent (offered), POSTs, admitted and refused (503 answers).
	OnChainPerSecond  float64 `json:"onChainPerSecond"`
	OfferedPerSecond  float64 `json:"offeredPerSecond"`
	PostsPerSecond    float64 `json:"postsPerSecond"`
	AdmittedPerSecond float64 `json:"admittedPerSecond"`
	RefusedPerSecond  float64 `json:"refusedPerSecond"`
	// EBsAnnounced counts the EBs the common chain announced in the span
	// (by their slot), EBsCertified those it certified, CertifiedShare the
	// share.
	EBsAnnounced   int     `json:"ebsAnnounced"`
	EBsCertified   int     `json:"ebsCertified"`
	CertifiedShare float64 `json:"certifiedShare"`
	// CertifiedPer30s counts the EBs certified in each whole window of
	// CertifiedWindowS of the span (the whole span when shorter), by their
	// slot; EveryWindowCertified says each has one at least. The window is
	// 30 mean RB intervals: 30 s on the devnet template, whose name the
	// field keeps.
	CertifiedWindowS     float64 `json:"certifiedWindowS"`
	CertifiedPer30s      []int   `json:"certifiedPer30s"`
	EveryWindowCertified bool    `json:"everyWindowCertified"`
	// MempoolPinned is the longest stretch a node's mempool spent at 90 %
	// of its byte bound or more; absent when the nodes did not give their
	// bound.
	MempoolPinned *MempoolPinned `json:"mempoolPinned,omitempty"`
	// Latency is from submission to the chain over the admitted txs first
	// sent in the span that are on every chain; absent without any.
	Latency *load.Latency `json:"latency,omitempty"`
	// Lost is the admitted txs on no chain and in no mempool at the end,
	// over the whole run.
	Lost uint64 `json:"lost"`
	// RefusedByNodes counts the submissions the nodes' edges refused in the
	// span by reason, over all nodes (their /status); RefusedByFirehose the
	// 503 answers the firehose got, by reason.
	RefusedByNodes    map[string]uint64 `json:"refusedByNodes"`
	RefusedByFirehose map[string]uint64 `json:"refusedByFirehose"`
}

// MempoolPinned is the longest stretch, from one status poll to the next
// that found it below, that a node's mempool held PinnedShare of its byte
// bound or more.
type MempoolPinned struct {
	PinnedShare float64 `json:"pinnedShare"`
	Seconds     float64 `json:"seconds"`
	Node        string  `json:"node,omitempty"`
}

const targetsMeasured = "over the measured span, from the system start plus the warm-up to the firehose's stop; " +
	"on chain: txs of the common chain's blocks whose slot started in it; certified: EBs of the common chain " +
	"by their slot; mempool pinned: from a status poll (once a second) to the next below the bound; " +
	"latency: txs first sent in it; lost: the whole run"

// pinnedShare is the share of its byte bound at which a mempool counts as
// pinned at it.
const pinnedShare = 0.9

// newTargets measures the run's targets over span; warmup is the one the
// span starts after, txs the firehose's report (nil without one).
func newTargets(r loadRun, span load.Span, warmup time.Duration, txs *load.Report) *Targets {
	t := &Targets{
		Measured: targetsMeasured, WarmupS: warmup.Seconds(),
		FromS: span.From.Sub(r.clock.Start).Seconds(), ToS: span.To.Sub(r.clock.Start).Seconds(),
		CertifiedPer30s: []int{},
	}
	if r.common != nil {
		t.OnChainPerSecond = float64(r.onChainTxs(span.From, span.To)) / span.Seconds()
	}
	t.OfferedPerSecond, _ = sampleGrowth(r.samples, span.From, span.To, firehoseValue(func(c load.Counts) float64 { return float64(c.Submitted) }))
	t.PostsPerSecond, _ = sampleGrowth(r.samples, span.From, span.To, firehoseValue(func(c load.Counts) float64 { return float64(c.Posts) }))
	t.AdmittedPerSecond, _ = sampleGrowth(r.samples, span.From, span.To, firehoseValue(func(c load.Counts) float64 { return float64(c.Admitted) }))
	t.RefusedPerSecond, _ = sampleGrowth(r.samples, span.From, span.To, firehoseValue(func(c load.Counts) float64 { return float64(sumCounts(c.Refused)) }))
	r.certifiedInSpan(t, span)
	t.MempoolPinned = r.mempoolPinned(span)
	if txs != nil {
		t.Latency, t.Lost = txs.LatencyInSpan, txs.Lost
	}
	t.RefusedByNodes = map[string]uint64{}
	for i := range r.names {
		for reason, n := range countDelta(r.samples, span.From, span.To, func(s statusSample) map[string]uint64 {
			if n := s.nodes[i]; n != nil && n.refused != nil {
				return n.refused
			}
			if s.nodes[i] != nil {
				return map[string]uint64{} // answering, nothing refused yet
			}
			return nil
		}) {
			t.RefusedByNodes[reason] += n
		}
	}
	t.RefusedByFirehose = countDelta(r.samples, span.From, span.To, func(s statusSample) map[string]uint64 {
		if s.firehose == nil {
			return nil
		}
		if s.firehose.Refused == nil {
			return map[string]uint64{}
		}
		return s.firehose.Refused
	})
	return t
}

// certifiedInSpan counts the common chain's EBs of the span, certified or
// not, and the certified ones in each certified window.
func (r loadRun) certifiedInSpan(t *Targets, span load.Span) {
	window := r.certifiedWindow()
	t.CertifiedWindowS = window.Seconds()
	windows, width := 1, span.To.Sub(span.From)
	if width >= window {
		windows, width = int(width/window), window
	}
	t.CertifiedPer30s = make([]int, windows)
	for _, eb := range r.ebs {
		if eb.RB == nil || !span.Contains(eb.Forged) {
			continue
		}
		t.EBsAnnounced++
		if eb.CertifiedBy == nil {
			continue
		}
		t.EBsCertified++
		if i := int(eb.Forged.Sub(span.From) / width); i < windows {
			t.CertifiedPer30s[i]++
		}
	}
	if t.EBsAnnounced > 0 {
		t.CertifiedShare = float64(t.EBsCertified) / float64(t.EBsAnnounced)
	}
	t.EveryWindowCertified = true
	for _, n := range t.CertifiedPer30s {
		t.EveryWindowCertified = t.EveryWindowCertified && n > 0
	}
}

// mempoolPinned is the longest stretch in span that a node's mempool held
// pinnedShare of its byte bound or more, nil when no node gave its bound.
func (r loadRun) mempoolPinned(span load.Span) *MempoolPinned {
	var longest *MempoolPinned
	for i, name := range r.names {
		var since time.Time // the first poll of the stretch under way; zero: none
		for _, s := range r.samples {
			n := s.nodes[i]
			if !span.Contains(s.at) || n == nil || n.mempoolCapacity == 0 {
				continue
			}
			if longest == nil {
				longest = &MempoolPinned{PinnedShare: pinnedShare}
			}
			pinned := float64(n.mempoolBytes) >= pinnedShare*float64(n.mempoolCapacity)
			switch {
			case pinned && since.IsZero():
				since = s.at
			case !pinned && !since.IsZero():
				longest.note(name, s.at.Sub(since))
				since = time.Time{}
			}
		}
		if !since.IsZero() {
			longest.note(name, span.To.Sub(since)) // pinned to the end
		}
	}
	return longest
}

func (p *MempoolPinned) note(node string, stretch time.Duration) {
	if s := stretch.Seconds(); s > p.Seconds {
		p.Seconds, p.Node = s, node
	}
}
