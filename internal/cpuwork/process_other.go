//go:build !unix

package cpuwork

import "time"

// ProcessTime is not measured here: ok is false.
func ProcessTime() (d time.Duration, ok bool) { return 0, false }
