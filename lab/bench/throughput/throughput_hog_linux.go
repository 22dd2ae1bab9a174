package throughput

import "syscall"

// busyLoopProcAttr asks the kernel to kill the busy loop should the bench
// die without stopping it.
func busyLoopProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
