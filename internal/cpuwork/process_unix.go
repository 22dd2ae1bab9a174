//go:build unix

package cpuwork

import (
	"syscall"
	"time"
)

// ProcessTime is the CPU time, user and system, this process has spent:
// all its threads, so Go's GC workers and Pebble's background work count.
// ok is false where it cannot be read.
func ProcessTime() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
