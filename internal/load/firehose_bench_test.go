package load

import (
	"context"
	"fmt"
	"github.com/leiosnode/leiosnode/api/apiclient"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/leiosnode/leiosnode/ledger"
)

// BenchmarkFirehoseCeiling measures the most txs a second the firehose can
// offer, as the devnet runs it (ten chains over three nodes, each tx built,
// signed and POSTed over loopback HTTP), against nodes that admit every tx
// at once without looking at it: whatever a devnet's firehose offers below
// this, its nodes held it back.
func BenchmarkFirehoseCeiling(b *testing.B) {
	const nodeCount, chainCount = 3, 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var admitted atomic.Int64
	instant := http.NewServeMux()
	instant.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) { writeAPIJSON(w, http.StatusOK, struct{}{}) })
	instant.HandleFunc("POST /api/submit/tx", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeAPIJSON(w, http.StatusAccepted, strings.Repeat("00", 32))
		if admitted.Add(1) == int64(b.N) {
			cancel()
		}
	})
	var nodes []Node
	for i := range nodeCount {
		srv := httptest.NewServer(instant)
		defer srv.Close()
		nodes = append(nodes, Node{Name: fmt.Sprintf("node-%d", i), URL: srv.URL})
	}
	funds := newTestFunds(b, chainCount, 1<<50)
	// A million txs a second per chain: far above what it can do, so it
	// goes as fast as it can.
	opts := Options{Rate: chainCount * 1e6}
	f := newFirehose(ledger.DefaultParams(), nodes, funds.chains(nodeCount), apiclient.NewHTTPClient(), opts)

	b.ResetTimer()
	f.Run(ctx)
	b.StopTimer()
	b.ReportMetric(float64(admitted.Load())/b.Elapsed().Seconds(), "tx/s")
	s := f.stats
	if s.Built > 0 {
		b.ReportMetric(float64(s.BuildTime.Microseconds())/float64(s.Built), "µs-build/tx")
	}
}
