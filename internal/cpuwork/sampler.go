package cpuwork

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultWindow is Options.Window's default.
const DefaultWindow = 5 * time.Second

// Options configure a Sampler; zero values take the documented defaults.
type Options struct {
	// Window is how long each CPU profile runs before the sampler stops it,
	// starts the next and counts it. Shorter windows show a miss sooner and
	// cost more parsing. Default 5 s.
	Window time.Duration
	// Registerer, if set, receives leiosnode_cpu_seconds_total.
	Registerer prometheus.Registerer
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Sampler profiles the process's CPU continuously and counts it by kind of
// work (the package comment says how). Run runs it; the other methods are
// safe for concurrent use.
type Sampler struct {
	opts    Options
	log     *slog.Logger
	seconds *prometheus.CounterVec // work
	running atomic.Bool            // Run holds the profiler, or tries to

	mu     sync.Mutex
	totals map[Kind]float64         // CPU seconds since New
	subs   map[*subscriber]struct{} // Profile's callers, waiting for windows
}

// New returns a Sampler, its counter registered on opts.Registerer.
func New(opts Options) (*Sampler, error) {
	opts = opts.withDefaults()
	s := &Sampler{
		opts: opts,
		log:  opts.Logger,
		seconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leiosnode_cpu_seconds_total",
			Help: "CPU time of the process by kind of work, estimated from the CPU profile's samples.",
		}, []string{LabelKey}),
		totals: make(map[Kind]float64),
		subs:   make(map[*subscriber]struct{}),
	}
	for _, k := range Kinds() {
		s.seconds.WithLabelValues(string(k)) // every kind shows, at 0
		s.totals[k] = 0
	}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(s.seconds); err != nil {
			return nil, fmt.Errorf("cpuwork: registering the CPU counter: %w", err)
		}
	}
	return s, nil
}

// Run profiles in windows until ctx ends, then stops the profile, counts
// its last window and returns nil. While another CPU profile holds Go's
// profiler, Run logs it and tries again each window; the CPU of those
// windows is not counted. Only one Run at a time.
func (s *Sampler) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("cpuwork: the sampler is already running")
	}
	defer s.running.Store(false)
	// The profiler's writer goroutine inherits Run's label, so both count
	// as other, whoever calls Run.
	Do(ctx, Other, s.run)
	return nil
}

func (s *Sampler) run(ctx context.Context) {
	// Two buffers: the profiler writes the running window into one while
	// the ended window is parsed from the other.
	var bufs [2]bytes.Buffer
	cur := 0
	profiling := false
	paused := false // a start failed, and was logged
	start := func() {
		bufs[cur].Reset()
		err := pprof.StartCPUProfile(&bufs[cur])
		switch {
		case err != nil && !paused:
			s.log.Warn("cpuwork: cannot profile the CPU (another CPU profile?), so it is not counted; trying again each window",
				"err", err, "window", s.opts.Window)
		case err == nil && paused:
			s.log.Info("cpuwork: profiling the CPU again")
		}
		profiling, paused = err == nil, err != nil
	}

	start()
	tick := time.NewTicker(s.opts.Window)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if profiling {
				pprof.StopCPUProfile()
				s.count(bufs[cur].Bytes(), time.Now())
			}
			return
		case <-tick.C:
		}
		ended, counted := cur, profiling
		if profiling {
			pprof.StopCPUProfile() // returns once the window is written whole
		}
		end := time.Now()
		cur ^= 1
		start() // before parsing the ended window: the gap stays a restart
		if counted {
			s.count(bufs[ended].Bytes(), end)
		}
	}
}
