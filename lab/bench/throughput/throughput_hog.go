package throughput

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

// busyLoopCommand is the hidden subcommand the --hog runs start: this
// binary again, spinning on one OS thread, so that `ps` names it.
const busyLoopCommand = "hog"

// busyLoopEnv makes a test binary, started as the busy loop, spin (a test
// binary has no subcommands).
const busyLoopEnv = "LEIOSBENCH_BUSY_LOOP"

// NewBusyLoopCommand is the hidden command the --hog runs start.
func NewBusyLoopCommand() *cobra.Command {
	return &cobra.Command{
		Use:    busyLoopCommand,
		Short:  "Spin on one OS thread until killed (throughput --hog's busy loop)",
		Hidden: true,
		Args:   cobra.NoArgs,
		Run:    func(*cobra.Command, []string) { spinForever() },
	}
}

// busyLoopSpins is what the busy loop counts: a global, so that the loop is not
// optimised away.
var busyLoopSpins uint64

// spinForever takes one core until the process is killed.
func spinForever() {
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	for {
		busyLoopSpins++
	}
}

// busyLoop is the busy loop of a --hog run: another process, spinning on
// one core for as long as the run lasts.
type busyLoop struct {
	pid      int
	quit     chan struct{}
	stopOnce sync.Once
	exited   chan struct{}
	cores    float64 // its CPU over its life, once exited
}

// startBusyLoop starts this binary's busy loop. On Linux the kernel kills
// it should this process die first (a crashed bench must not leave a core
// taken).
//
// The kernel sends that signal when the thread that started the child
// exits, not the process; the Go runtime may retire threads. So one
// goroutine, locked to its thread, starts the loop and holds the thread
// until the loop is stopped.
func startBusyLoop() (*busyLoop, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary to start the busy loop: %w", err)
	}
	b := &busyLoop{quit: make(chan struct{}), exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		cmd := exec.Command(exe, busyLoopCommand)
		cmd.Env = append(os.Environ(), busyLoopEnv+"=1")
		cmd.SysProcAttr = busyLoopProcAttr()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		since := time.Now()
		b.pid = cmd.Process.Pid
		started <- nil
		<-b.quit
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if st := cmd.ProcessState; st != nil {
			if wall := time.Since(since).Seconds(); wall > 0 {
				b.cores = (st.UserTime() + st.SystemTime()).Seconds() / wall
			}
		}
		close(b.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting the busy loop: %w", err)
	}
	return b, nil
}

// stop kills the loop, waits for it, and returns the cores it took over
// its life. It may be called again: the later calls only return that.
func (b *busyLoop) stop() float64 {
	b.stopOnce.Do(func() { close(b.quit) })
	<-b.exited
	return b.cores
}
