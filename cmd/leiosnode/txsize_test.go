//go:build unix

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/lab/load"
)

// TestTxSizeFlag: a bad --tx-size is one clear error line, given before
// anything is read or generated: by load (its keys are not even read) and
// by devnet.
func TestTxSizeFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"load, a word", []string{"load", "--node", "http://127.0.0.1:1", "--skey", "nowhere.skey", "--rate", "10", "--duration", "1s", "--tx-size", "huge"},
			`--tx-size: tx size "huge": want N (bytes), MIN-MAX (log-uniform between, e.g. 200-16384) or large`},
		{"load, MIN above MAX", []string{"load", "--node", "http://127.0.0.1:1", "--skey", "nowhere.skey", "--rate", "10", "--duration", "1s", "--tx-size", "900-300"},
			`--tx-size: tx size "900-300": MIN above MAX`},
		{"devnet, zero", []string{"devnet", "--dir", filepath.Join(t.TempDir(), "d"), "--duration", "1s", "--tx-size", "0"},
			`--tx-size: tx size "0": sizes are positive`},
	} {
		stderr, code := runCLI(t, tc.args...)
		t.Run(tc.name, func(t *testing.T) { checkOneErrorLine(t, stderr, code, tc.want) })
	}
}

// TestLoadCommandTxSize loads a one-node devnet with the large mix: the
// node (its real API, mempool, ledger and forge) admits every padded tx
// and puts them on chain, and the lines and the report state the bytes.
func TestLoadCommandTxSize(t *testing.T) {
	dir, config := devnetNode(t, "--start-delay", "1s", "--funded", "2")
	node := startNode(t, config)
	t.Cleanup(func() { node.stop(t) })
	var cfg struct {
		HTTPAddr string `json:"httpAddr"`
	}
	readJSON(t, config, &cfg)
	reportFile := filepath.Join(t.TempDir(), "r.json")
	out, err := execute(context.Background(), "load", "--node", "http://"+cfg.HTTPAddr,
		"--skey", filepath.Join(dir, "funds", "payment-0.skey"), "--skey", filepath.Join(dir, "funds", "payment-1.skey"),
		"--rate", "20", "--duration", "3s", "--tx-size", "large", "--report", reportFile)
	t.Logf("load output:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" TxkB) admitted ", " TxkB/s (tx size large), "} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	var r load.Report
	readJSON(t, reportFile, &r)
	if r.TxSize != "large" || r.Admitted == 0 || r.OnChain == 0 || len(r.Rejected) != 0 || r.Lost != 0 || len(r.StoppedChains) != 0 {
		t.Fatalf("report %+v: want padded txs admitted and on chain, none rejected or lost", r)
	}
	if mean := float64(r.OnChainBytes) / float64(r.OnChain); mean < 500 || r.OfferedTxkBPerSecond <= 0 || r.OnChainTxkBPerSecond <= 0 {
		t.Errorf("%d bytes on chain in %d txs (mean %.0f B), offered %.1f TxkB/s, %.1f on chain: want padded txs", r.OnChainBytes, r.OnChain, mean, r.OfferedTxkBPerSecond, r.OnChainTxkBPerSecond)
	}
}
