package cpuwork

import (
	"time"

	"github.com/google/pprof/profile"
)

// count parses the profile of a window that ended at end, adds its
// samples' CPU time to the totals and the counter by kind, and hands the
// profile to Profile's callers. A window that does not parse is logged
// and not counted.
func (s *Sampler) count(data []byte, end time.Time) {
	p, err := profile.ParseData(data) // copies what it keeps: data is reused
	if err != nil {
		s.log.Warn("cpuwork: a window's CPU profile does not parse; its CPU is not counted", "err", err)
		return
	}
	cpu := cpuValue(p)
	if cpu < 0 {
		s.log.Warn("cpuwork: a window's CPU profile has no CPU time; it is not counted", "types", p.SampleType)
		return
	}
	nanos := make(map[Kind]int64)
	for _, smp := range p.Sample {
		nanos[classify(smp)] += smp.Value[cpu]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, ns := range nanos {
		sec := float64(ns) / 1e9
		s.totals[k] += sec
		s.seconds.WithLabelValues(string(k)).Add(sec)
	}
	// Counted first: a caller woken by this window sees it in Seconds.
	for sub := range s.subs {
		sub.add(p, end)
	}
}

// cpuValue is the index of the CPU time among p's sample values, or -1.
func cpuValue(p *profile.Profile) int {
	for i, t := range p.SampleType {
		if t.Type == "cpu" && t.Unit == "nanoseconds" {
			return i
		}
	}
	return -1
}

// Seconds is the CPU time counted since New, in seconds by kind (every
// kind, zeros included). The map is the caller's.
func (s *Sampler) Seconds() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]float64, len(s.totals))
	for k, sec := range s.totals {
		m[string(k)] = sec
	}
	return m
}
