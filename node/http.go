package node

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveHTTP serves the local API until ctx is cancelled.
func (n *Node) serveHTTP(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, n.Status())
	})
	mux.HandleFunc("POST /api/submit/tx", n.handleSubmit)
	mux.HandleFunc("GET /api/utxo/{txid}/{index}", n.handleUTxO)
	mux.HandleFunc("GET /api/mempool/{hash}", n.handleMempoolTx)
	mux.HandleFunc("GET /api/ebs", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, n.leios.times.list())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(n.registry, promhttp.HandlerOpts{}))
	listener, err := net.Listen("tcp", n.cfg.HTTPAddr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	if err := srv.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// registerMetrics exports the chain's state alongside the host's own metrics.
func (n *Node) registerMetrics() {
	gauge := func(name, help string, value func() float64) {
		n.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "leiosnode", Name: name, Help: help}, value))
	}
	gauge("tip_block_number", "Block number of the selected tip.", func() float64 { return float64(n.chain.Tip().BlockNumber) })
	gauge("tip_slot", "Slot of the selected tip.", func() float64 { return float64(n.chain.Tip().Point.Slot) })
	gauge("immutable_tip_block_number", "Block number of the immutable tip.", func() float64 { return float64(n.chain.ImmutableTip().BlockNumber) })
	gauge("blocks_adopted", "Blocks that changed the selected chain when added.", func() float64 { return float64(n.adopted.Load()) })
	gauge("errors", "Log records at level error.", func() float64 { return float64(n.errors.Load()) })
	gauge("mempool_txs", "Txs in the mempool.", func() float64 { return float64(n.mempool.Snapshot().Len()) })
	gauge("mempool_bytes", "Bytes of the txs in the mempool.", func() float64 { return float64(n.mempool.Snapshot().Bytes()) })
	gauge("leios_fetched_bytes", "EB bodies and txs fetched from peers.", func() float64 { return float64(n.leios.fetcher.Stats().FetchedBytes) })
	gauge("leios_requests_in_flight", "LeiosFetch requests in flight.", func() float64 { return float64(n.leios.fetcher.Stats().Requests) })
	gauge("leios_closures_complete", "EB closures completed.", func() float64 { _, c := n.leios.times.counts(); return float64(c) })
	gauge("txs_on_chain", "Txs in the selected chain.", func() float64 { return float64(n.chain.TxsOnChain()) })
	if n.forger != nil {
		gauge("blocks_forged", "Blocks this node forged.", func() float64 { return float64(n.forger.Forged()) })
	}
	n.registry.MustRegister(n.leios.diffusion)
	n.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}
