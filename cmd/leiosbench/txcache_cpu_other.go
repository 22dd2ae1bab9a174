//go:build !unix

package main

import "time"

// cpuTime is unavailable here; settle then waits a fixed time.
func cpuTime() (time.Duration, bool) { return 0, false }
