package supervisor

import "syscall"

// ChildProcAttr puts a node in its own process group, so a Ctrl-C at the
// terminal reaches only the supervisor, which then stops the nodes in order;
// and asks the kernel to send it SIGTERM should the supervisor die without
// stopping it (kill -9 of the supervisor must not leave nodes behind).
func ChildProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
