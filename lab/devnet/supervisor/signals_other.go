//go:build !unix

package supervisor

import (
	"errors"
	"os"
)

// errNoFreeze: only Unix has SIGSTOP and SIGCONT.
var errNoFreeze = errors.New("freezing a process needs SIGSTOP, which only Unix has")

func stopProcess(*os.Process) error     { return errNoFreeze }
func continueProcess(*os.Process) error { return nil }
