package load

import "time"

// Span is the part of a run its figures are measured over: from the
// system start plus the warm-up to the firehose's stop.
type Span struct {
	From, To time.Time
}

// NewSpan is the span of a run whose load stopped at stopped; ok is false
// when the run did not outlast its warm-up.
func NewSpan(systemStart time.Time, warmup time.Duration, stopped time.Time) (Span, bool) {
	s := Span{From: systemStart.Add(warmup), To: stopped}
	return s, s.To.After(s.From)
}

// Seconds is the span's length.
func (s Span) Seconds() float64 { return s.To.Sub(s.From).Seconds() }

// Contains says whether t is in [From, To).
func (s Span) Contains(t time.Time) bool { return !t.Before(s.From) && t.Before(s.To) }
