package cpuwork

import (
	"context"
	"fmt"
	"time"

	"github.com/google/pprof/profile"
)

// subscriber is a Profile call waiting for windows. Its fields are
// guarded by the Sampler's mu.
type subscriber struct {
	windows []*profile.Profile
	end     time.Time     // when the last of windows ended
	ready   chan struct{} // capacity 1: windows grew
}

// add hands sub the profile of a window that ended at end. Never blocks:
// the sampler must not wait for a caller.
func (sub *subscriber) add(p *profile.Profile, end time.Time) {
	sub.windows = append(sub.windows, p)
	sub.end = end
	select {
	case sub.ready <- struct{}{}:
	default:
	}
}

// subscribe hands sub every window that ends from now on, until
// unsubscribe.
func (s *Sampler) subscribe() *subscriber {
	sub := &subscriber{ready: make(chan struct{}, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[sub] = struct{}{}
	return sub
}

func (s *Sampler) unsubscribe(sub *subscriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, sub)
}

// take returns the windows handed to sub since the last take, and when
// the last of them ended.
func (s *Sampler) take(sub *subscriber) ([]*profile.Profile, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	windows := sub.windows
	sub.windows = nil
	return windows, sub.end
}

// Profile is the CPU profile of the windows that end from now until one
// ends d or more from now, merged, their samples with their labels. It
// covers at least d, as /debug/pprof/profile?seconds=d should: the first
// window began before the call and the last may end up to a Window after
// d. It fails when ctx ends, and when that window has not ended within d,
// two Windows and a second (the sampler is not running, or another CPU
// profile holds the profiler).
func (s *Sampler) Profile(ctx context.Context, d time.Duration) (*profile.Profile, error) {
	sub := s.subscribe()
	defer s.unsubscribe(sub)
	until := time.Now().Add(d)
	limit := d + 2*s.opts.Window + time.Second // the second for a busy machine
	giveUp := time.NewTimer(limit)
	defer giveUp.Stop()
	var merged *profile.Profile // the windows so far: one profile, not an hour of them
	count := 0
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cpuwork: profile: %w", ctx.Err())
		case <-giveUp.C:
			return nil, fmt.Errorf("cpuwork: no CPU profile window ended %v or more after the request, within %v (%d ended before): the sampler is not running, or another CPU profile holds the profiler",
				d, limit, count)
		case <-sub.ready:
		}
		windows, end := s.take(sub)
		if len(windows) == 0 {
			continue // taken on the last wake
		}
		count += len(windows)
		if merged != nil {
			windows = append(windows, merged)
		}
		var err error
		if merged, err = profile.Merge(windows); err != nil {
			return nil, fmt.Errorf("cpuwork: merging CPU profile windows: %w", err)
		}
		if !end.Before(until) {
			return merged, nil
		}
	}
}
