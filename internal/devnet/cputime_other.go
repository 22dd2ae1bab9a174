//go:build !unix

package devnet

import "time"

// processCPUTime is not measured here: the CPU floor falls back to the
// time on the clock.
func processCPUTime() (time.Duration, bool) { return 0, false }
