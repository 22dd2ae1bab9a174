package sync

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/leiosnode/leiosnode/lab/bench/benchtest"
	"github.com/leiosnode/leiosnode/lab/bench/output"
)

// TestSyncQuick runs `leiosbench sync --quick` (a leiosnode built from
// this module; the nodes are its processes): the chain holds certified
// EBs, the validation and every sync reach its tip with every tx, the
// hoarders were served and node-0's heap stayed within its bound, and the
// plot and the profile are written.
func TestSyncQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds leiosnode and runs four node processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "sync.json")
	benchtest.Run(t, NewCommand(), "--quick", "--plots", dir, "--cpu-profile", "--json", path)
	var r syncReport
	if err := output.ReadJSON(path, &r); err != nil {
		t.Fatal(err)
	}
	c := r.Chain
	if c.Blocks < 8 || c.EBsCertified < 1 || c.TxsViaEBs == 0 || c.Txs != c.TxsViaRBs+c.TxsViaEBs {
		t.Errorf("forged chain: %+v", c)
	}
	if v := r.Validation; v.Seconds <= 0 || len(v.Curve) != c.Blocks || v.Curve[len(v.Curve)-1].Txs != c.Txs {
		t.Errorf("validation: %.2f s, %d samples", v.Seconds, len(v.Curve))
	}
	if len(r.Runs) != 4 {
		t.Fatalf("%d syncs, want 4: from 1 and 3 peers by each path", len(r.Runs))
	}
	for _, run := range r.Runs {
		last := run.Curve[len(run.Curve)-1]
		if run.Seconds <= 0 || last.Block != uint64(c.Blocks) || last.Txs != c.Txs || run.OfValidation <= 0 {
			t.Errorf("sync from %d peers: %.2f s, ended at block %d with %d txs (chain: %d, %d)",
				run.Peers, run.Seconds, last.Block, last.Txs, c.Blocks, c.Txs)
		}
		// The prototype's path never fetches an EB whole; either path
		// fetched every certified body, one way or the other.
		if run.Protocols == "prototype" && run.EBsWhole != 0 || run.EBsWhole+run.BodiesByPoint < uint64(c.EBsCertified) {
			t.Errorf("sync from %d peers by %s: %d EBs whole, %d bodies one at a time, %d certified", run.Peers, run.Protocols, run.EBsWhole, run.BodiesByPoint, c.EBsCertified)
		}
		// Certified closures are fetched at least once, and kept.
		if run.CertifiedKept != c.EBsCertified {
			t.Errorf("sync from %d peers kept %d of the %d certified closures", run.Peers, run.CertifiedKept, c.EBsCertified)
		}
		if run.LeiosFetchedMB*1e6 < float64(c.EBBytes)*0.99 {
			t.Errorf("sync from %d peers fetched %.2f MB of EBs, the certified ones are %.2f MB", run.Peers, run.LeiosFetchedMB, float64(c.EBBytes)/1e6)
		}
	}
	if r.Target == nil || r.Target.Peers != 3 {
		t.Errorf("target %+v", r.Target)
	}
	checkHoard(t, r.Hoard)
	benchtest.CheckPNG(t, filepath.Join(dir, "sync.png"))
	checkFileNotEmpty(t, r.Profile)
	var table bytes.Buffer
	r.Write(&table)
	for _, want := range []string{"validation, in-process, one core", "sync from 3 peer(s), cip", "sync from 3 peer(s), prototype", "target: from 3 peers", "hoarders: 32 identities", "bound on the heap in use", "reading client"} {
		if !bytes.Contains(table.Bytes(), []byte(want)) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
}

// checkHoard checks the hoarders phase of a --quick run: 32 identities on
// 64 streams for 10 s, node-0 sampled in each phase, most streams served,
// the peak heap within its bound, and the reading client within the serve
// budget (a peer's limiter holds a second's worth: in s seconds it is
// served at most s + 1 seconds' worth).
func checkHoard(t *testing.T, h *hoardReport) {
	t.Helper()
	if h == nil {
		t.Fatal("the report has no hoarders")
	}
	if h.Identities != 32 || h.Streams != 64 || h.WindowSeconds != 10 || h.LargestBlockBytes <= 0 {
		t.Errorf("hoarders: %d identities, %d streams, %.0f s, largest block %d", h.Identities, h.Streams, h.WindowSeconds, h.LargestBlockBytes)
	}
	for _, phase := range []string{"before", "during", "after"} {
		if !slices.ContainsFunc(h.Samples, func(s hoardSample) bool { return s.Phase == phase && s.HeapBytes > 0 && s.RSSBytes > 0 }) {
			t.Errorf("hoarders: no sample of node-0 %s the hoard", phase)
		}
	}
	if h.BaselineHeapBytes <= 0 || h.BaselineLiveBytes <= 0 || h.PeakRSSBytes <= 0 || h.GOGCPercent <= 0 || h.Bound == "" {
		t.Errorf("hoarders: baseline heap %.0f, live %.0f, peak RSS %.0f, GOGC %g, bound %q",
			h.BaselineHeapBytes, h.BaselineLiveBytes, h.PeakRSSBytes, h.GOGCPercent, h.Bound)
	}
	if !h.Held || h.PeakHeapBytes <= 0 || h.PeakHeapBytes > h.BoundBytes {
		t.Errorf("hoarders: peak heap %.0f bytes, bound %.0f (%s)", h.PeakHeapBytes, h.BoundBytes, h.Bound)
	}
	if h.PeakServedStreams < 58 {
		t.Errorf("hoarders: node-0 served at most %d of the %d streams", h.PeakServedStreams, h.Streams)
	}
	rd := h.Reader
	if rd == nil {
		t.Fatal("hoarders: no reading client")
	}
	if rd.Streams != 4 || rd.Bytes == 0 || rd.Seconds < 10 || rd.BudgetPerPeer <= 0 {
		t.Errorf("reading client: %+v", rd)
	}
	if served := rd.MaxIdentityBytesPerSecond * rd.Seconds; served > float64(rd.BudgetPerPeer)*(rd.Seconds+1) {
		t.Errorf("reading client: an identity was served %.0f bytes in %.1f s, over its budget of %d a second", served, rd.Seconds, rd.BudgetPerPeer)
	}
}

func checkFileNotEmpty(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Error(err)
		return
	}
	if st.Size() == 0 {
		t.Errorf("%s is empty", path)
	}
}
