package sync

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/leiosnode/leiosnode/internal/bench/benchtest"
	"github.com/leiosnode/leiosnode/internal/bench/output"
)

// TestSyncQuick runs `leiosbench sync --quick` (a leiosnode built from
// this module; the nodes are its processes): the chain holds certified
// EBs, the validation and every sync reach its tip with every tx, and the
// plot and the profile are written.
func TestSyncQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds leiosnode and runs four node processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "sync.json")
	benchtest.Run(t, NewCommand(), "--quick", "--plots", dir, "--cpu-profile", "--timeout", "2m", "--json", path)
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
	if len(r.Runs) != 2 {
		t.Fatalf("%d syncs, want 2", len(r.Runs))
	}
	for _, run := range r.Runs {
		last := run.Curve[len(run.Curve)-1]
		if run.Seconds <= 0 || last.Block != uint64(c.Blocks) || last.Txs != c.Txs || run.OfValidation <= 0 {
			t.Errorf("sync from %d peers: %.2f s, ended at block %d with %d txs (chain: %d, %d)",
				run.Peers, run.Seconds, last.Block, last.Txs, c.Blocks, c.Txs)
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
	benchtest.CheckPNG(t, filepath.Join(dir, "sync.png"))
	checkFileNotEmpty(t, r.Profile)
	var table bytes.Buffer
	r.Write(&table)
	for _, want := range []string{"validation, in-process, one core", "sync from 3 peer(s)", "target: from 3 peers"} {
		if !bytes.Contains(table.Bytes(), []byte(want)) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
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
