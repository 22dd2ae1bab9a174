//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/internal/waittest"
)

// TestStatusCommand runs a two-node devnet, each node its own process, and
// reads one node's state with the status command once it has a chain and
// a peer.
func TestStatusCommand(t *testing.T) {
	dir := t.TempDir()
	if out, err := execute(context.Background(), "genesis", "--dir", dir, "--nodes", "2", "--funded", "0", "--start-delay", "0s"); err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	var cfgs [2]*config.Config
	for i := range cfgs {
		var err error
		if cfgs[i], err = config.Load(filepath.Join(dir, fmt.Sprintf("node-%d", i), "config.json")); err != nil {
			t.Fatal(err)
		}
		defer startNode(t, cfgs[i].Path).stop(t)
	}
	url := "http://" + cfgs[0].HTTPAddr
	peerID := peerIDOf(t, cfgs[1].Path)

	// Wait for a chain and the peer, through the node's API.
	var raw json.RawMessage
	waittest.Until(t, "a chain and the peer in node-0's /status", func() bool {
		var st nodeStatus
		err := apiclient.GetStatus(context.Background(), http.DefaultClient, url, &raw)
		if err == nil {
			err = json.Unmarshal(raw, &st)
		}
		return err == nil && st.Tip.BlockNumber > 0 && len(st.Peers) == 1
	})

	out, err := execute(context.Background(), "status", "--node", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for _, want := range []string{
		"node       " + peerIDOf(t, cfgs[0].Path) + " (block producer)\n",
		"peers      1\n  " + peerID,
		"tip        #", "immutable  ", "mempool    0 txs, 0 bytes\n", "EBs        ", "votes      ", "errors     0 logged\n",
		"forks      none deeper than k (0 seen since the start)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}

	// The same answer with the peers as objects, each with its address,
	// direction and when it connected, as newer nodes give them.
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-90 * time.Second).UTC().Truncate(time.Second)
	doc["peers"] = []map[string]any{{"id": peerID, "addr": cfgs[1].ListenAddrs[0], "direction": "outbound", "since": since.Format(time.RFC3339)}}
	objects, _ := json.Marshal(doc)
	var st nodeStatus
	if err := json.Unmarshal(objects, &st); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	st.print(&b, since.Add(90*time.Second))
	want := fmt.Sprintf("peers      1\n  %s  %s  outbound  since %s (1m30s)\n", peerID, cfgs[1].ListenAddrs[0], since.Format(time.RFC3339))
	if !strings.Contains(b.String(), want) {
		t.Errorf("status with peer objects lacks %q:\n%s", want, b.String())
	}
}

// TestStatusForks: a node on a dead fork says so, and what to do.
func TestStatusForks(t *testing.T) {
	var st nodeStatus
	doc := `{"peerId": "12D3KooWA", "peers": [], "forks": {"deepForks": 2, "stranded": true,
		"peers": [{"id": "12D3KooWB", "tip": {"blockNumber": 40, "slot": 900, "hash": "ab"}}]}}`
	if err := json.Unmarshal([]byte(doc), &st); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	st.print(&b, time.Now())
	for _, want := range []string{"node       12D3KooWA (relay)", "tip        genesis (no block yet)", "STRANDED", "delete its databasePath",
		"  12D3KooWB  tip #40 at slot 900, ab\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}

// TestStatusRefill: a node whose LeiosDB lost certified closures says how
// many and since when, until they are back.
func TestStatusRefill(t *testing.T) {
	var st nodeStatus
	doc := `{"peerId": "12D3KooWA", "peers": [], "leios": {"certifiedClosuresMissing": 23, "certifiedClosuresMissingSince": "2026-12-05T11:00:00Z"}}`
	if err := json.Unmarshal([]byte(doc), &st); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	st.print(&b, time.Date(2026, 12, 5, 11, 1, 30, 0, time.UTC))
	if want := "refill     23 certified closures missing from the LeiosDB since 2026-12-05T11:00:00Z (1m30s): fetching them from peers\n"; !strings.Contains(b.String(), want) {
		t.Errorf("status lacks %q:\n%s", want, b.String())
	}
}

func TestStatusUnreachable(t *testing.T) {
	_, err := execute(context.Background(), "status", "--node", "http://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "node http://127.0.0.1:1: ") {
		t.Errorf("status of no node: %v", err)
	}
}

// peerIDOf is the peer ID of the node key of a config, as peer-id prints it.
func peerIDOf(t *testing.T, configFile string) string {
	t.Helper()
	cfg, err := config.Load(configFile)
	if err != nil {
		t.Fatal(err)
	}
	out, err := execute(context.Background(), "peer-id", "--key", cfg.NodeKeyFile)
	if err != nil {
		t.Fatalf("peer-id: %v\n%s", err, out)
	}
	return strings.SplitN(out, "\n", 2)[0]
}
