//go:build unix

package devnet

import (
	"syscall"
	"time"
)

// processCPUTime is the CPU time, user and system, this process spent
// (all its threads: the GC's workers count).
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
