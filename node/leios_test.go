package node

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/simtrace"
	"github.com/leiosnode/leiosnode/internal/waittest"
)

// With more txs than an RB carries, a leader announces an EB; every node
// learns of it, fetches its body and closure from a peer that offers them,
// and reports when each became complete. Each node writes a trace: every
// line of it in the Leios simulators' format, and together they hold the
// slots, the RBs and EBs generated, sent and received, and the time a
// block took to apply.
func TestEBsDiffuseToEveryNode(t *testing.T) {
	configs := testNet(t, 3, 100*time.Millisecond, func(g *consensus.Genesis) {
		g.Leios.RBMaxBodyBytes = 700 // three of the test's txs
	})
	for _, cfg := range configs {
		cfg.TraceFile = filepath.Join(filepath.Dir(cfg.NodeKeyFile), "trace.jsonl")
	}
	_, stop := runNodes(t, configs)

	// A chain of 30 txs, all submitted to node 0 (each spends the last).
	waitHTTP(t, configs[0].HTTPAddr)
	for _, tx := range payments(t, 30) {
		if status, reply := post(t, configs[0].HTTPAddr, "application/cbor", tx.Bytes()); status != http.StatusAccepted {
			t.Fatalf("submit: %d %s", status, reply)
		}
	}
	for _, cfg := range configs {
		var s apitypes.Status
		waittest.Until(t, cfg.HTTPAddr+" completing an EB closure", func() bool {
			var err error
			s, err = getStatus(cfg.HTTPAddr)
			return err == nil && s.Leios.ClosuresComplete > 0
		})
		if s.Leios.EBsAnnounced == 0 || s.Leios.BodiesHeld == 0 {
			t.Fatalf("%s: a complete closure without announcement or body: %+v", cfg.HTTPAddr, s.Leios)
		}
	}
	// Some node completed an EB it did not forge: it fetched it.
	fetched := false
	for _, cfg := range configs {
		s, err := getStatus(cfg.HTTPAddr)
		must(t, err)
		if s.Leios.ClosuresComplete > s.Leios.EBsForged && s.Leios.FetchedBytes > 0 {
			fetched = true
		}
	}
	if !fetched {
		t.Fatal("no node fetched an EB from a peer")
	}
	// Every node can say when it held what; the announcement comes first.
	resp, err := http.Get("http://" + configs[2].HTTPAddr + "/api/ebs")
	must(t, err)
	defer resp.Body.Close()
	var ebs []apitypes.EBTimes
	must(t, json.NewDecoder(resp.Body).Decode(&ebs))
	complete := 0
	for _, eb := range ebs {
		if eb.Closure == nil {
			continue
		}
		complete++
		if eb.Announced == nil || eb.Body == nil || eb.Body.Before(*eb.Announced) || eb.Closure.Before(*eb.Body) {
			t.Fatalf("EB %s: announced %v, body %v, closure %v", eb.EbHash[:8], eb.Announced, eb.Body, eb.Closure)
		}
	}
	if complete == 0 {
		t.Fatal("/api/ebs lists no complete EB")
	}

	stop() // the traces are written out as the nodes stop
	seen := map[string]int{}
	for _, cfg := range configs {
		b, err := os.ReadFile(cfg.TraceFile)
		must(t, err)
		lines, err := simtrace.Check(bytes.NewReader(b))
		if err != nil || lines == 0 {
			t.Fatalf("%s: %d lines, %v", cfg.TraceFile, lines, err)
		}
		for _, typ := range []string{"Slot", "RBGenerated", "RBReceived", "RBSent", "EBGenerated", "EBReceived", "EBSent", "Cpu"} {
			seen[typ] += bytes.Count(b, []byte(`"type":"`+typ+`"`))
		}
	}
	for typ, n := range seen {
		if n == 0 {
			t.Errorf("no %s event in any trace", typ)
		}
	}
	t.Logf("events of the three traces by type: %v", seen)
}
