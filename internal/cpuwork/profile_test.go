package cpuwork

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/internal/waittest"
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
	// Profile gives up a second past d and two windows; a busy machine may
	// end no window in that time, and the test then asks again.
	var p *profile.Profile
	var called time.Time
	waittest.Until(t, "a profile of "+d.String(), func() bool {
		called = time.Now()
		var err error
		p, err = s.Profile(context.Background(), d)
		return err == nil
	})
	if waited := time.Since(called); waited < d {
		t.Errorf("Profile(%v) returned after %v", d, waited)
	}
	// Four windows or five; the profiler's own measure of each window
	// starts when its writer goroutine runs, late on a busy machine (a
	// window of a loaded machine measured 25 ms), so only the bounds that
	// do not depend on the machine's speed are held: some time, and no
	// more than the windows that can have ended meanwhile.
	if got := time.Duration(p.DurationNanos); got <= 0 || got > 8*s.opts.Window {
		t.Errorf("the merged profile lasts %v", got)
	}
	if !labelled(p, Voting) {
		t.Error("no sample labelled voting")
	}
	if err := p.CheckValid(); err != nil {
		t.Error(err)
	}
}

func TestProfileHandlerServesPprof(t *testing.T) {
	s := start(t, Options{Window: 200 * time.Millisecond})
	spinning(t, Intake)
	srv := httptest.NewServer(http.HandlerFunc(s.ProfileHandler))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/debug/pprof/profile?seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s", resp.Status, body)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/octet-stream" {
		t.Errorf("Content-Type %q", got)
	}
	p, err := profile.Parse(resp.Body) // gzipped, as pprof writes it
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Duration(p.DurationNanos); d < 500*time.Millisecond {
		t.Errorf("asked for a second, the profile lasts %v", d)
	}
	if cpuValue(p) < 0 || !labelled(p, Intake) {
		t.Errorf("want CPU samples labelled intake: %v", p.SampleType)
	}
}

func TestProfileHandlerErrors(t *testing.T) {
	s, err := New(Options{Window: 10 * time.Millisecond}) // not running
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(s.ProfileHandler))
	srv.Config.WriteTimeout = 5 * time.Second
	srv.Start()
	defer srv.Close()

	for _, c := range []struct {
		query  string
		status int
		says   string
	}{
		{"seconds=1", http.StatusInternalServerError, "no CPU profile window ended"},
		{"seconds=5", http.StatusBadRequest, "exceeds server's WriteTimeout"},
		{"", http.StatusBadRequest, "exceeds server's WriteTimeout"}, // 30 s by default
		{"seconds=3601", http.StatusBadRequest, "exceeds 3600 seconds"},
	} {
		resp, err := http.Get(srv.URL + "/debug/pprof/profile?" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.says) || resp.Header.Get("X-Go-Pprof") != "1" {
			t.Errorf("%q: %s %q, want %d saying %q", c.query, resp.Status, body, c.status, c.says)
		}
	}
}
