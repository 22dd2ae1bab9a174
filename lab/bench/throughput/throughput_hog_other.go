//go:build !linux

package throughput

import "syscall"

// busyLoopProcAttr: outside Linux, a bench killed outright leaves its busy
// loop running; a bench that returns, or panics, still stops it.
func busyLoopProcAttr() *syscall.SysProcAttr { return nil }
