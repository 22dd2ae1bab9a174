//go:build !unix

package main

import "time"

// cpuTime is unavailable here: the txcache probe's settle waits a fixed
// time, and the tx-submission benchmark reports no CPU figures.
func cpuTime() (time.Duration, bool) { return 0, false }
