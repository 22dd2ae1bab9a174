//go:build !linux

package supervisor

import "syscall"

// ChildProcAttr: outside Linux, nodes share the supervisor's process group
// and outlive it if it is killed.
func ChildProcAttr() *syscall.SysProcAttr { return nil }
