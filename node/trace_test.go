package node

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/simtrace"
)

// Three nodes writing traces, fed txs beyond what RBs carry: each trace is
// lines of the Leios simulators' format, every one, and holds the node's
// slots, the RBs and EBs it generated, sent and received, and the time it
// took to apply a peer's block.
func TestTracesInTheSimulatorsFormat(t *testing.T) {
	configs := testNet(t, 3, 100*time.Millisecond, func(g *consensus.Genesis) {
		g.Leios.RBMaxBodyBytes = 700 // three of the test's txs
	})
	for _, cfg := range configs {
		cfg.TraceFile = filepath.Join(filepath.Dir(cfg.NodeKeyFile), "trace.jsonl")
	}
	_, stop := runNodes(t, configs)
	waitHTTP(t, configs[0].HTTPAddr)
	for _, tx := range payments(t, 30) {
		if status, reply := post(t, configs[0].HTTPAddr, "application/cbor", tx.Bytes()); status != http.StatusAccepted {
			t.Fatalf("submit: %d %s", status, reply)
		}
	}
	// Until every node completed a closure: EBs were generated, sent and
	// received.
	deadline := time.Now().Add(30 * time.Second)
	for _, cfg := range configs {
		for {
			s, err := getStatus(cfg.HTTPAddr)
			if err == nil && s.Leios.ClosuresComplete > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s completed no closure (%v)", cfg.HTTPAddr, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
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
