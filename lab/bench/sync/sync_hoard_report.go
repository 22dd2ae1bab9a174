package sync

import (
	"fmt"
	"io"
)

// The bound on node-0's heap in use while the hoarders hold their streams.
// What the hoard may hold: for each stream the block being sent
// (boundCopiesPerStream copies of the chain's largest block: as read from
// the store, its encoded frame, and the muxer's and the encryption's
// buffers of it), and for each hoarder boundPerIdentity (its connection's
// Noise and Yamux buffers, the host's state of the peer). The collector
// lets the heap grow to (1 + GOGC/100) times what it found live before
// it collects, and heap in use counts whole spans, partly filled:
// boundSpanShare on top.
const (
	boundCopiesPerStream = 4
	boundPerIdentity     = 1 << 20
	boundSpanShare       = 0.125
)

// hoardReport is the hoarders phase's figures.
type hoardReport struct {
	Identities        int     `json:"identities"`
	Streams           int     `json:"streams"`
	WindowSeconds     float64 `json:"window_seconds"`
	LargestBlockBytes int     `json:"largest_block_bytes"`
	// Heap in use (go_memstats_heap_inuse_bytes) and RSS
	// (process_resident_memory_bytes) of node-0: the most before the
	// hoard, during it, and the last after the hoarders left.
	BaselineHeapBytes float64 `json:"baseline_heap_bytes"`
	PeakHeapBytes     float64 `json:"peak_heap_bytes"`
	AfterHeapBytes    float64 `json:"after_heap_bytes"`
	BaselineRSSBytes  float64 `json:"baseline_rss_bytes"`
	PeakRSSBytes      float64 `json:"peak_rss_bytes"`
	// The live heap, as the collector found it at its last cycle (its goal
	// go_memstats_next_gc_bytes over 1 + GOGC/100): the most before and
	// during the hoard.
	GOGCPercent       float64 `json:"gogc_percent"`
	BaselineLiveBytes float64 `json:"baseline_live_bytes"`
	PeakLiveBytes     float64 `json:"peak_live_bytes"`
	// BoundBytes is what PeakHeapBytes is held to, computed as Bound says.
	BoundBytes float64 `json:"bound_bytes"`
	Bound      string  `json:"bound"`
	Held       bool    `json:"held"`
	// PeakServedStreams is the most block-fetch streams node-0 served at
	// once during the hoard (leiosnode_network_served_streams).
	PeakServedStreams int           `json:"peak_served_streams"`
	Samples           []hoardSample `json:"samples"`
	Reader            *readerRun    `json:"reader"`
}

// hoardSample is node-0's memory and served streams at a time, from the
// first sample before the hoard.
type hoardSample struct {
	Seconds   float64 `json:"s"`
	Phase     string  `json:"phase"` // before, during, after
	HeapBytes float64 `json:"heap_inuse_bytes"`
	LiveBytes float64 `json:"live_bytes"`
	RSSBytes  float64 `json:"rss_bytes"`
	Served    int     `json:"served_blockfetch_streams"`
}

// readerRun is the reading client's pull, beside the serve budget the node
// runs with.
type readerRun struct {
	Identities     int     `json:"identities"`
	Streams        int     `json:"streams"`
	Seconds        float64 `json:"seconds"`
	Bytes          uint64  `json:"bytes"`
	BytesPerSecond float64 `json:"bytes_per_second"`
	// MaxIdentityBytesPerSecond is the faster identity's rate.
	MaxIdentityBytesPerSecond float64 `json:"max_identity_bytes_per_second"`
	BudgetPerPeer             int     `json:"budget_per_peer_bytes_per_second"`
	BudgetTotal               int     `json:"budget_total_bytes_per_second"`
}

// summarize derives the peaks, the bound and the verdict from the samples.
func (r *hoardReport) summarize() {
	for _, smp := range r.Samples {
		switch smp.Phase {
		case "before":
			r.BaselineHeapBytes = max(r.BaselineHeapBytes, smp.HeapBytes)
			r.BaselineLiveBytes = max(r.BaselineLiveBytes, smp.LiveBytes)
			r.BaselineRSSBytes = max(r.BaselineRSSBytes, smp.RSSBytes)
		case "during":
			r.PeakHeapBytes = max(r.PeakHeapBytes, smp.HeapBytes)
			r.PeakLiveBytes = max(r.PeakLiveBytes, smp.LiveBytes)
			r.PeakRSSBytes = max(r.PeakRSSBytes, smp.RSSBytes)
			r.PeakServedStreams = max(r.PeakServedStreams, smp.Served)
		case "after":
			r.AfterHeapBytes = smp.HeapBytes
		}
	}
	perStreams := float64(r.Streams * boundCopiesPerStream * r.LargestBlockBytes)
	perIdentities := float64(r.Identities * boundPerIdentity)
	growth := 1 + r.GOGCPercent/100
	r.BoundBytes = (1 + boundSpanShare) * growth * (r.BaselineLiveBytes + perStreams + perIdentities)
	r.Bound = fmt.Sprintf("(1 + %g %% spans) × (1 + GOGC %g %%) × (live heap before %s + %d streams × %d × largest block %.1f kB + %d identities × %d MiB)",
		100*boundSpanShare, r.GOGCPercent, mib(r.BaselineLiveBytes), r.Streams, boundCopiesPerStream,
		float64(r.LargestBlockBytes)/1e3, r.Identities, boundPerIdentity>>20)
	r.Held = r.PeakHeapBytes <= r.BoundBytes
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

// Write prints the phase's table.
func (r *hoardReport) Write(w io.Writer) {
	fmt.Fprintf(w, "\nhoarders: %d identities ask node-0 for the whole chain on %d block-fetch streams and read nothing for %.0f s (largest block %.1f kB)\n",
		r.Identities, r.Streams, r.WindowSeconds, float64(r.LargestBlockBytes)/1e3)
	fmt.Fprintf(w, "%-24s %12s %12s %12s\n", "node-0", "heap in use", "live heap", "RSS")
	fmt.Fprintf(w, "%-24s %12s %12s %12s\n", "before (most)", mib(r.BaselineHeapBytes), mib(r.BaselineLiveBytes), mib(r.BaselineRSSBytes))
	fmt.Fprintf(w, "%-24s %12s %12s %12s\n", "during the hoard (peak)", mib(r.PeakHeapBytes), mib(r.PeakLiveBytes), mib(r.PeakRSSBytes))
	fmt.Fprintf(w, "%-24s %12s\n", "after (last)", mib(r.AfterHeapBytes))
	fmt.Fprintf(w, "served block-fetch streams, the most at once: %d of %d\n", r.PeakServedStreams, r.Streams)
	verdict := "within it"
	if !r.Held {
		verdict = "ABOVE IT"
	}
	fmt.Fprintf(w, "bound on the heap in use: %s = %s; peak %s: %s\n", r.Bound, mib(r.BoundBytes), mib(r.PeakHeapBytes), verdict)
	if rd := r.Reader; rd != nil {
		fmt.Fprintf(w, "reading client: %d streams of %d identities for %.1f s: %.1f MiB/s (%.1f MiB), the faster identity %.1f MiB/s; serve budget %s/s a peer, %s/s in total\n",
			rd.Streams, rd.Identities, rd.Seconds, rd.BytesPerSecond/(1<<20), float64(rd.Bytes)/(1<<20),
			rd.MaxIdentityBytesPerSecond/(1<<20), mib(float64(rd.BudgetPerPeer)), mib(float64(rd.BudgetTotal)))
	}
}
