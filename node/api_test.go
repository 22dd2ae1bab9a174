package node

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/ledger"
)

func post(t *testing.T, addr, contentType string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/api/submit/tx", contentType, bytes.NewReader(body))
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A tx submitted at one node is admitted with its id, lands in a block, and
// both nodes then hold its output; bad submissions get the ledger's reason.
func TestSubmitReachesEveryChain(t *testing.T) {
	configs := testNet(t, 2, 100*time.Millisecond)
	runNodes(t, configs)

	key, addr := payer()
	in := ledger.GenesisTxIn(addr)
	// The output's coin has the same encoded width whatever the fee, so the
	// fee computed with a placeholder is the fee of the final tx.
	body := ledger.TxBody{Inputs: []ledger.TxIn{in}, Outputs: []ledger.TxOut{{Address: addr, Coin: 49_000_000_000}}}
	fee, err := body.MinFee(ledger.DefaultParams(), 1)
	must(t, err)
	body.Fee, body.Outputs[0].Coin = fee, 50_000_000_000-fee
	tx, err := body.Build([]ed25519.PrivateKey{key})
	must(t, err)

	waitHTTP(t, configs[0].HTTPAddr)
	if status, reply := post(t, configs[0].HTTPAddr, "application/json", tx.Bytes()); status != http.StatusUnsupportedMediaType {
		t.Fatalf("wrong content type: %d %s", status, reply)
	}
	if status, reply := post(t, configs[0].HTTPAddr, "application/cbor", []byte{0x80}); status != http.StatusBadRequest {
		t.Fatalf("undecodable tx: %d %s", status, reply)
	}
	unbalanced := body
	unbalanced.Outputs = []ledger.TxOut{{Address: addr, Coin: 50_000_000_000}}
	bad, err := unbalanced.Build([]ed25519.PrivateKey{key})
	must(t, err)
	status, reply := post(t, configs[0].HTTPAddr, "application/cbor", bad.Bytes())
	if status != http.StatusBadRequest || !strings.Contains(reply, "fee") && !strings.Contains(reply, "conserved") {
		t.Fatalf("unbalanced tx: %d %s", status, reply)
	}

	status, reply = post(t, configs[0].HTTPAddr, "application/cbor", tx.Bytes())
	id := tx.ID()
	var gotID string
	if status != http.StatusAccepted || json.Unmarshal([]byte(reply), &gotID) != nil || gotID != hex.EncodeToString(id[:]) {
		t.Fatalf("valid tx: %d %s", status, reply)
	}
	if resp, err := http.Get(fmt.Sprintf("http://%s/api/mempool/%x", configs[0].HTTPAddr, id[:])); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the admitted tx is not in the mempool: %v", err)
	} else {
		resp.Body.Close()
	}

	for _, cfg := range configs {
		waittest.Until(t, "the tx's output on "+cfg.HTTPAddr, func() bool {
			resp, err := http.Get(fmt.Sprintf("http://%s/api/utxo/%x/0", cfg.HTTPAddr, id[:]))
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
	if s, err := getStatus(configs[1].HTTPAddr); err != nil || s.TxsOnChain == 0 {
		t.Fatalf("txsOnChain on the other node: %+v %v", s.TxsOnChain, err)
	}
	checkMetricNames(t, configs[0].HTTPAddr)
}

// checkMetricNames scrapes a node's /metrics and holds every family to the
// Prometheus naming conventions dashboards rely on: one namespace (besides
// the Go runtime's and the process's), counters and only counters ending in
// _total.
func checkMetricNames(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	must(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	must(t, err)
	for name, f := range families {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_") {
			continue
		}
		if !strings.HasPrefix(name, "leiosnode_") {
			t.Errorf("%s: not in the leiosnode namespace", name)
		}
		if isCounter := f.GetType() == dto.MetricType_COUNTER; isCounter != strings.HasSuffix(name, "_total") {
			t.Errorf("%s: a %v; counters, and only counters, end in _total", name, f.GetType())
		}
	}
	// Every series the Grafana dashboard plots exists (labelled vectors
	// have none until their first event: a healthy node has no violations).
	dashboard, err := os.ReadFile("../docs/grafana/leiosnode.json")
	must(t, err)
	noEventYet := map[string]bool{"leiosnode_network_violations_total": true, "leiosnode_network_limit_refusals_total": true}
	for _, name := range regexp.MustCompile(`leiosnode_[a-z_]+`).FindAllString(string(dashboard), -1) {
		if families[strings.TrimSuffix(name, "_bucket")] == nil && !noEventYet[name] {
			t.Errorf("the dashboard plots %s, which /metrics does not have", name)
		}
	}
}

func waitHTTP(t *testing.T, addr string) {
	t.Helper()
	waittest.Until(t, addr+" answering /status", func() bool {
		_, err := getStatus(addr)
		return err == nil
	})
}

// assertMetric scrapes a node's /metrics and wants the unlabelled series
// name at value.
func assertMetric(t *testing.T, addr, name string, value float64) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	must(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	must(t, err)
	f, ok := families[name]
	if !ok || len(f.GetMetric()) != 1 {
		t.Fatalf("/metrics has no single series %s", name)
	}
	if got := f.GetMetric()[0].GetGauge().GetValue(); got != value {
		t.Errorf("/metrics: %s %v, want %v", name, got, value)
	}
}
