//go:build linux

package cpuwork

import (
	"context"
	"runtime"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time of the calling thread.
func threadCPU(t *testing.T) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// burn spins until the calling goroutine has used d of CPU, and returns
// how much it used: locked to its thread, the thread's CPU is its own,
// however the machine's other work delays it.
func burn(t *testing.T, d time.Duration) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU(t)
	x := uint64(1)
	for threadCPU(t)-start < d {
		for range 10_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	runtime.KeepAlive(x)
	return threadCPU(t) - start
}

// processCPU is the CPU time the process used, user and system.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestSamplerCountsWorkByLabel(t *testing.T) {
	reg := prometheus.NewRegistry()
	before := processCPU(t)
	// Windows of a second, as the node's are of several: each restart
	// loses what the profiler's writer waits to be scheduled, which on a
	// machine loaded several times over was half of 200 ms windows.
	s := start(t, Options{Window: time.Second, Registerer: reg})

	// Intake burns three times forge's CPU: intake from a goroutine Do
	// labelled (the child inherits the label), forge from a goroutine that
	// applies a context Context labelled.
	var intake, forge time.Duration
	g, ctx := errgroup.WithContext(context.Background())
	g.Go(func() error {
		var err error
		Do(ctx, Intake, func(ctx context.Context) {
			child := new(errgroup.Group)
			child.Go(func() error { intake = burn(t, 600*time.Millisecond); return nil })
			err = child.Wait()
		})
		return err
	})
	g.Go(func() error {
		pprof.SetGoroutineLabels(Context(ctx, Forge))
		forge = burn(t, 200*time.Millisecond)
		return nil
	})
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	nextWindow(t, s.Sampler) // the burns' last samples are counted
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	used := processCPU(t) - before

	secs := s.Seconds()
	var total float64
	for _, sec := range secs {
		total += sec
	}
	t.Logf("burnt intake %v, forge %v; process %v; counted %v", intake, forge, used, secs)
	if !(secs["intake"] > secs["forge"] && secs["forge"] > 0) {
		t.Errorf("want intake > forge > 0: %v", secs)
	}
	if got, want := secs["intake"], intake.Seconds(); got < 0.5*want || got > 1.5*want {
		t.Errorf("intake counted %.3f s, burnt %.3f s", got, want)
	}
	if share := total / used.Seconds(); share < 0.5 || share > 1.25 {
		t.Errorf("counted %.3f s of the process's %.3f s (%.0f %%)", total, used.Seconds(), 100*share)
	}

	// The counter says what Seconds says.
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "leiosnode_cpu_seconds_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			counted[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	if len(counted) != len(Kinds()) {
		t.Errorf("the counter has %d kinds, want %d: %v", len(counted), len(Kinds()), counted)
	}
	for k, sec := range secs {
		if counted[k] != sec {
			t.Errorf("counter %s = %v, Seconds %v", k, counted[k], sec)
		}
	}
}
