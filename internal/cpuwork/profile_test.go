package cpuwork

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/sync/errgroup"
)

// spin uses CPU until ctx ends.
func spin(ctx context.Context) {
	x := uint64(1)
	for ctx.Err() == nil {
		for range 10_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	_ = x
}

// spinning runs a goroutine labelled k that uses CPU until the test ends.
func spinning(t *testing.T, k Kind) {
	ctx, cancel := context.WithCancel(context.Background())
	g := new(errgroup.Group)
	g.Go(func() error { Do(ctx, k, spin); return nil })
	t.Cleanup(func() { cancel(); _ = g.Wait() })
}

// labelled reports whether p has a sample labelled k.
func labelled(p *profile.Profile, k Kind) bool {
	return slices.ContainsFunc(p.Sample, func(s *profile.Sample) bool {
		return slices.Contains(s.Label[LabelKey], string(k))
	})
}

func TestProfileMergesWindowsWithLabels(t *testing.T) {
	s := start(t, Options{Window: 100 * time.Millisecond})
	spinning(t, Voting)
	const d = 350 * time.Millisecond
	called := time.Now()
	p, err := s.Profile(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(called); waited < d {
		t.Errorf("Profile(%v) returned after %v", d, waited)
	}
	// Four windows or five; the profiler's own measure of each window
	// starts when its writer goroutine runs, late on a busy machine, so
	// the band is broad: more than one window, less than eight.
	if got := time.Duration(p.DurationNanos); got < d/2 || got > 8*s.opts.Window {
		t.Errorf("the merged profile lasts %v", got)
	}
	if !labelled(p, Voting) {
		t.Error("no sample labelled voting")
	}
	if err := p.CheckValid(); err != nil {
		t.Error(err)
	}
}
