package cpuwork

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/internal/waittest"
)

// The tests here profile the process: Go has one CPU profiler, so none of
// them runs in parallel.

// running is a Sampler whose Run runs until stop.
type running struct {
	*Sampler
	stop func() error // cancels Run and returns what it returned
}

// start runs a Sampler with opts until the test ends, or stop.
func start(t *testing.T, opts Options) running {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := new(errgroup.Group)
	g.Go(func() error { return s.Run(ctx) })
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = g.Wait()
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return running{Sampler: s, stop: stop}
}

// nextWindow waits until a window ends and is counted.
func nextWindow(t *testing.T, s *Sampler) {
	t.Helper()
	// Profile gives up a second past two windows; a busy machine may end
	// no window in that time, and the test then asks again.
	waittest.Until(t, "a CPU profile window to end", func() bool {
		_, err := s.Profile(context.Background(), 0)
		return err == nil
	})
}

func TestRunStopsTheProfilerWhenCancelled(t *testing.T) {
	s := start(t, Options{Window: 50 * time.Millisecond})
	nextWindow(t, s.Sampler) // it profiles
	if err := s.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Fatalf("the profiler is still held after Run returned: %v", err)
	}
	pprof.StopCPUProfile()
}

func TestRunTwiceAtOnce(t *testing.T) {
	s := start(t, Options{Window: 50 * time.Millisecond})
	nextWindow(t, s.Sampler) // the first Run is in
	if err := s.Run(context.Background()); err == nil {
		t.Fatal("a second Run while the first runs")
	}
}

// syncBuffer is a log destination the test reads while Run writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestSamplerWaitsForABusyProfiler(t *testing.T) {
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Fatal(err)
	}
	held := true
	defer func() {
		if held {
			pprof.StopCPUProfile()
		}
	}()
	var log syncBuffer
	s := start(t, Options{Window: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})

	waittest.Until(t, "Run saying it cannot profile the CPU", func() bool { return strings.Contains(log.String(), "cannot profile the CPU") })
	// No window can end while the profiler is held: Profile gives up, and
	// Run goes on trying meanwhile.
	if _, err := s.Profile(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "no CPU profile window ended") {
		t.Fatalf("Profile with the profiler held: %v", err)
	}
	if got := log.String(); strings.Count(got, "cannot profile the CPU") != 1 {
		t.Fatalf("want the failure logged once:\n%s", got)
	}

	pprof.StopCPUProfile()
	held = false
	nextWindow(t, s.Sampler)
	if got := log.String(); !strings.Contains(got, "profiling the CPU again") {
		t.Fatalf("want the recovery logged:\n%s", got)
	}
}

func TestProfileWithoutASampler(t *testing.T) {
	s, err := New(Options{Window: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Profile(context.Background(), time.Millisecond); err == nil {
		t.Fatal("a profile from a sampler that does not run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Profile(ctx, time.Second); err == nil {
		t.Fatal("a profile after its context ended")
	}
}
