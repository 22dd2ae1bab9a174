package api

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/admission"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/leios"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/chainsync"
)

// Options are the node's parts the API serves. Every field but Forger is
// required.
type Options struct {
	Chain   *chaindb.DB
	Mempool *mempool.Mempool
	Leios   *leios.Pipeline
	Host    *network.Host
	// Forger is the node's block producer; nil on a relay.
	Forger *forge.Forger
	Clock  consensus.Clock
	// MaxTxSize bounds a submitted tx's body (the ledger's max tx size).
	MaxTxSize int
	// MaxBatchTxs and MaxBatchBytes bound a batch of POST /api/submit/txs:
	// its txs and its body. Defaults 256 and 64 KiB (and never less than
	// one tx of MaxTxSize takes).
	MaxBatchTxs   int
	MaxBatchBytes int
	// Params are the ledger's protocol parameters, served to wallets; their
	// network id is the one the address queries accept.
	Params ledger.Params
	// ActiveSlotsCoeff (f, the genesis' decimal text) and LeiosParams are
	// the network's, served with Params and the slot length; an empty
	// ActiveSlotsCoeff serves Params alone.
	ActiveSlotsCoeff json.Number
	LeiosParams      consensus.LeiosParams
	// CPU counts the node's CPU by kind of work (package cpuwork): /status
	// gives its totals, and /debug/pprof/profile is served from its
	// windows, since it holds Go's one CPU profiler. Nil: neither.
	CPU *cpuwork.Sampler
	// Admission is the node's edge: a submission it refuses is answered 503
	// at once, with Retry-After and the reason. Nil: every submission is
	// tried.
	Admission *admission.Gate
	// SubmitTimeout is how long a submit waits for its turn and for room in
	// the mempool before it is answered 503. Default 5 s.
	SubmitTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout the
	// whole request with its body, and IdleTimeout a kept-alive
	// connection's wait for the next request. Defaults 5 s, 10 s, 60 s.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	// MaxRequests bounds the requests in flight; beyond it a request is
	// answered 503 at once. Default 64. MaxUploads bounds those with a body
	// (submits), and MaxLargeAnswers those whose answers grow with the
	// chain (/api/blocks, /api/ebs, /metrics, /debug/pprof/), so that the
	// small reads (/status, the lookups) always have the rest, and
	// MaxUploadsPerClient the bodies one client address may be sending at
	// once. Defaults 32, 16, 4. See limits.go for how a full pool makes
	// room for a client that behaves.
	MaxRequests         int
	MaxUploads          int
	MaxLargeAnswers     int
	MaxUploadsPerClient int
	// WriteTimeout and WriteRate bound each write of an answer: n bytes
	// must be taken by the client within WriteTimeout + n/WriteRate (bytes
	// a second), or its connection is closed. Defaults 5 s and 100 kB/s,
	// the allowance the node's peers have for a frame it sends, less the
	// fixed part.
	WriteTimeout time.Duration
	WriteRate    int
	// MinUploadRate and UploadGrace bound a body's arrival: n bytes must
	// be in within UploadGrace + n/MinUploadRate (bytes a second) of the
	// request's start, and within ReadTimeout; a slower upload is answered
	// 408. Defaults 16 KiB/s and 1 s.
	MinUploadRate int
	UploadGrace   time.Duration
	// MaxAnswerBytes bounds an answer of GET /api/blocks: it ends before
	// the block that would take it past this (a first block alone may).
	// Default 1 MiB.
	MaxAnswerBytes int
	// Pprof serves Go's profiles at /debug/pprof/ (config.Config.Pprof).
	Pprof bool
	// Forks is what chain sync knows of the peers' chains
	// (chainsync.Service.Forks). Nil: nothing known.
	Forks func() chainsync.ForkStatus
	// Registry is what /metrics serves: the node's parts register their
	// own metrics on it, the API its own (metrics.go).
	Registry *prometheus.Registry
	// BlocksAdopted counts the blocks that changed the selection when
	// added, Errors the log records at level error, since the node started;
	// TxsOnChain and CertRBsOnChain the txs and the CertRBs of the selected
	// chain, whenever they were added.
	BlocksAdopted  func() uint64
	Errors         func() uint64
	TxsOnChain     func() uint64
	CertRBsOnChain func() uint64
}

func (o *Options) setDefaults() {
	if o.SubmitTimeout <= 0 {
		o.SubmitTimeout = 5 * time.Second
	}
	if o.MaxBatchTxs <= 0 {
		o.MaxBatchTxs = apitypes.DefaultMaxBatchTxs
	}
	if o.MaxBatchBytes <= 0 {
		o.MaxBatchBytes = apitypes.DefaultMaxBatchBytes
	}
	o.MaxBatchBytes = max(o.MaxBatchBytes, o.MaxTxSize+9) // the array's head, at most 9 bytes
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.MaxUploads <= 0 {
		o.MaxUploads = min(DefaultMaxUploads, o.MaxRequests)
	}
	if o.MaxLargeAnswers <= 0 {
		o.MaxLargeAnswers = min(DefaultMaxLargeAnswers, o.MaxRequests)
	}
	if o.MaxUploadsPerClient <= 0 {
		o.MaxUploadsPerClient = min(DefaultMaxUploadsPerClient, o.MaxUploads)
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.WriteRate <= 0 {
		o.WriteRate = DefaultWriteRate
	}
	if o.MinUploadRate <= 0 {
		o.MinUploadRate = DefaultMinUploadRate
	}
	if o.UploadGrace <= 0 {
		o.UploadGrace = DefaultUploadGrace
	}
	if o.MaxAnswerBytes <= 0 {
		o.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if o.Forks == nil {
		o.Forks = func() chainsync.ForkStatus { return chainsync.ForkStatus{} }
	}
}

// Server is the node's HTTP API. Build it with New; Serve it once.
type Server struct {
	opts    Options
	mux     *http.ServeMux
	limits  *limiter
	handler http.Handler // mux, within the limits of requests in flight
	latency *latencyTracker
}

// New builds the API and registers its own metrics on opts.Registry.
func New(opts Options) (*Server, error) {
	opts.setDefaults()
	s := &Server{opts: opts, mux: http.NewServeMux(), latency: newLatencyTracker()}
	s.limits = newLimiter(opts, s.classify, s.bodyLimit)
	s.handler = s.limits.wrap(s.mux)
	if err := s.registerMetrics(); err != nil {
		return nil, err
	}
	if err := s.limits.register(opts.Registry); err != nil {
		return nil, err
	}
	s.mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.Status())
	})
	s.mux.HandleFunc("POST /api/submit/tx", s.handleSubmit)
	s.mux.HandleFunc("POST /api/submit/txs", s.handleSubmitBatch)
	s.mux.HandleFunc("GET /api/utxo/{txid}/{index}", s.handleUTxO)
	s.mux.HandleFunc("GET /api/mempool/{txid}", s.handleMempoolTx)
	s.mux.HandleFunc("GET /api/addresses/{address}/utxos", s.handleAddressUTxOs)
	s.mux.HandleFunc("GET /api/parameters", s.handleParameters)
	s.mux.HandleFunc("GET /api/blocks", s.handleBlocks)
	s.mux.HandleFunc("GET /api/ebs", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.opts.Leios.EBTimes())
	})
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(opts.Registry, promhttp.HandlerOpts{}))
	if opts.Pprof {
		s.servePprof()
	}
	return s, nil
}

// servePprof serves the profiles of the running node, for finding what
// limits it.
func (s *Server) servePprof() {
	opts := s.opts
	s.mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	if opts.CPU != nil {
		s.mux.HandleFunc("GET /debug/pprof/profile", opts.CPU.ProfileHandler)
	} else {
		s.mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	}
	s.mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

// classify is the pool beyond all requests that r's route takes: poolLarge
// for the routes whose answers grow with the chain or the node, poolAll
// for the rest, whose answers are a few kB.
func (s *Server) classify(r *http.Request) pool {
	switch _, pattern := s.mux.Handler(r); pattern {
	case "GET /api/blocks", "GET /api/ebs", "GET /metrics", "GET /debug/pprof/", "GET /debug/pprof/profile", "GET /debug/pprof/trace":
		return poolLarge
	}
	return poolAll
}

// bodyLimit is the most bytes r's body may have: a batch's for POST
// /api/submit/txs, a tx's for the other uploads.
func (s *Server) bodyLimit(r *http.Request) int64 {
	if _, pattern := s.mux.Handler(r); pattern == "POST /api/submit/txs" {
		return int64(s.opts.MaxBatchBytes)
	}
	return int64(s.opts.MaxTxSize)
}

// Handler is the API's routes within its limit of requests in flight, for
// tests that serve it themselves.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves on listener until ctx ends, then shuts down within two
// seconds and closes it. The caller binds listener, so that an address in
// use fails the node before it starts, not once it runs. Meanwhile Serve
// follows the chain to time the submitted txs to the chain.
func (s *Server) Serve(ctx context.Context, listener net.Listener) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.follow(ctx) })
	g.Go(func() error { return s.serveHTTP(ctx, listener) })
	return g.Wait()
}

// serveHTTP serves the routes on listener until ctx ends, then shuts down
// within two seconds.
func (s *Server) serveHTTP(ctx context.Context, listener net.Listener) error {
	srv := s.httpServer()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		return nil
	})
	g.Go(func() error {
		// Every connection's goroutine inherits the label: the API's work,
		// but for tx submission, which labels itself intake. Requests'
		// contexts carry it too, so a handler that relabels itself gets it
		// back after (pprof.Do restores its context's labels).
		var err error
		base := cpuwork.Context(context.Background(), cpuwork.API)
		srv.BaseContext = func(net.Listener) context.Context { return base }
		cpuwork.Do(ctx, cpuwork.API, func(context.Context) { err = srv.Serve(listener) })
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return g.Wait()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeRawJSON answers body, JSON already encoded, in one write: its
// deadline is sized by its length.
func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}
