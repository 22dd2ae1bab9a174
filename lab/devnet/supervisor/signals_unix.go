//go:build unix

package supervisor

import (
	"os"
	"syscall"
)

// stopProcess freezes p (SIGSTOP): it keeps its sockets and memory but runs
// no more, as a machine that hangs.
func stopProcess(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }

// continueProcess lets a frozen p run again (SIGCONT); to a running
// process it does nothing.
func continueProcess(p *os.Process) error { return p.Signal(syscall.SIGCONT) }
