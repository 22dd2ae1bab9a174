package consensus

import "time"

// Clock maps wall-clock time to slots.
type Clock struct {
	Start      time.Time
	SlotLength time.Duration
}

// Clock returns the genesis slot clock.
func (g *Genesis) Clock() Clock { return Clock{Start: g.SystemStart, SlotLength: g.SlotLength()} }

// SlotAt is the slot in progress at t (0 before the system start).
func (c Clock) SlotAt(t time.Time) uint64 {
	d := t.Sub(c.Start)
	if d < 0 {
		return 0
	}
	return uint64(d / c.SlotLength)
}

// SlotStart is when slot begins.
func (c Clock) SlotStart(slot uint64) time.Time {
	return c.Start.Add(time.Duration(slot) * c.SlotLength)
}
