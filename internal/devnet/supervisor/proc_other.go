//go:build !linux

package supervisor

import "syscall"

// childProcAttr: outside Linux, nodes share the supervisor's process group
// and outlive it if it is killed.
func childProcAttr() *syscall.SysProcAttr { return nil }
