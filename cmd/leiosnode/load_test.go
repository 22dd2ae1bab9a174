//go:build unix

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/capacity"
	"github.com/leiosnode/leiosnode/lab/load"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestLoadCommand loads a one-node devnet, run as its own process, from
// two funded keys with leiosnode load, after one of them paid once with tx
// send (so its chain starts from a change output, not the genesis funds):
// a line a second, txs admitted, on chain, none lost, in the report file
// too. A key that is not a payment signing key, a node that does not
// answer, a node's libp2p port given for its API and a key holding
// nothing are one clear error line each.
func TestLoadCommand(t *testing.T) {
	dir, config := devnetNode(t, "--start-delay", "1s", "--funded", "2")
	node := startNode(t, config)
	t.Cleanup(func() { node.stop(t) })
	var cfg struct {
		HTTPAddr    string   `json:"httpAddr"`
		ListenAddrs []string `json:"listenAddrs"`
	}
	readJSON(t, config, &cfg)
	url := "http://" + cfg.HTTPAddr
	// The node's libp2p address as a URL: what an operator gives who
	// copied a topology's address instead of the API's.
	libp2pURL := "http://127.0.0.1:" + cfg.ListenAddrs[0][strings.LastIndex(cfg.ListenAddrs[0], "/")+1:]
	key0, key1 := filepath.Join(dir, "funds", "payment-0.skey"), filepath.Join(dir, "funds", "payment-1.skey")
	alice := newPayee(t, dir, "alice")
	id, err := sendTx(key0, filepath.Join(dir, "alice.addr"), "5000000", url)
	if err != nil {
		t.Fatal(err)
	}
	awaitOutput(t, url, alice, id, 0, 5_000_000)
	bob := newPayee(t, dir, "bob") // holds nothing

	reportFile := filepath.Join(t.TempDir(), "r.json")
	out, err := execute(context.Background(), "load", "--node", url, "--skey", key0, "--skey", key1,
		"--rate", "20", "--duration", "4s", "--warmup", "1s", "--report", reportFile)
	t.Logf("load output:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"    1s offered ", " admitted ", " refused ", "in all ", "load stopped", "txs: ", " lost", "admission to on chain", "structural capacity ", "  measured ", "report written to"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	var r load.Report
	readJSON(t, reportFile, &r)
	if r.Chains != 2 || r.Admitted == 0 || r.OnChain == 0 || r.Lost != 0 || r.Unchecked != 0 || len(r.StoppedChains) != 0 || len(r.Problems) != 0 {
		t.Errorf("report %+v: want txs from 2 chains admitted and on chain, none lost", r)
	}
	if r.Latency == nil || r.Latency.Txs != int(r.OnChain) || r.Latency.P50Ms <= 0 {
		t.Errorf("latency %+v, want one over the %d txs on chain", r.Latency, r.OnChain)
	}
	// The network's capacity, from the node's parameters (the devnet
	// template's), at the txs' mean size, beside the chain from 1 s to the
	// load's stop, and the same txs on the same chain through an ideal
	// network. Not that a block came in those 3 s: with an RB a second on
	// average, none does 4 % of the time, more on a loaded machine.
	if c := r.Capacity; c == nil || c.Model.Params.SlotLengthMs != 100 || c.Model.Params.ActiveSlotsCoeff != 0.1 ||
		c.Model.MeanTxBytes != r.MeanTxBytes || r.MeanTxBytes <= 0 || c.Chain == nil || c.Chain.ToS-c.Chain.FromS < 2.5 ||
		c.Chain.Latency == nil || c.Chain.Ideal == nil || c.Chain.Ideal.Txs+c.Chain.Ideal.Waiting < c.Chain.Latency.Txs {
		t.Errorf("capacity %+v at %v B a tx, want the devnet's model, the chain measured and the ideal network's latency", c, r.MeanTxBytes)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a verification key", []string{"--node", url, "--skey", filepath.Join(dir, "funds", "payment-0.vkey")}, "--skey: "},
		{"a node that does not answer", []string{"--node", "http://127.0.0.1:1", "--skey", key0}, "--node http://127.0.0.1:1: does not answer"},
		{"a node's libp2p port", []string{"--node", url + "," + libp2pURL, "--skey", key0},
			"--node " + libp2pURL + ": that is the node's libp2p port, not its HTTP API: load needs the address in httpAddr of the node's config.json"},
		{"a key holding nothing", []string{"--node", url, "--skey", filepath.Join(dir, "bob.skey")}, "bob: its address " + ledger.FormatAddress(bob) + " holds no output"},
	} {
		stderr, code := runCLI(t, append([]string{"load", "--rate", "10", "--duration", "1s"}, tc.args...)...)
		t.Run(tc.name, func(t *testing.T) { checkOneErrorLine(t, stderr, code, tc.want) })
	}
}

// TestLoadWarmup: the load's warm-up is the one given, else the network's
// latency model's p95 rounded up to a second (7 s for the devnet
// template's 6.6 s), else none without a model.
func TestLoadWarmup(t *testing.T) {
	devnet := capacity.NewParams(100*time.Millisecond, 0.1, consensus.DefaultLeiosParams())
	for _, tc := range []struct {
		name    string
		params  *capacity.Params
		given   time.Duration
		isGiven bool
		want    time.Duration
		err     bool
	}{
		{"the model's p95", &devnet, 0, false, 7 * time.Second, false},
		{"given", &devnet, 2 * time.Second, true, 2 * time.Second, false},
		{"given as none", &devnet, 0, true, 0, false},
		{"no model", nil, 0, false, 0, false},
		{"negative", &devnet, -time.Second, true, 0, true},
	} {
		got, err := loadWarmup(tc.params, tc.given, tc.isGiven)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %v (%v), want %v (error %v)", tc.name, got, err, tc.want, tc.err)
		}
	}
}
