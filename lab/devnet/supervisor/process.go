package supervisor

import (
	"context"
	"errors"
	"fmt"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// StopTimeout is how long a stopped node has, after SIGTERM, to close
// its databases before it is killed.
const StopTimeout = 15 * time.Second

// Processes are a devnet's nodes, each its own OS process running
// `leiosnode run`. They live until Stop: each then gets SIGTERM, and SIGKILL
// if it has not exited stopTimeout later (exec.Cmd's Cancel and WaitDelay).
// The chaos mode kills, restarts, freezes and thaws them meanwhile.
type Processes struct {
	exe         string
	nodes       []layout.Node
	args        map[string][]string // more arguments of run, by node name
	stopTimeout time.Duration
	// mu guards procs (a restart replaces a node's process) and stopped.
	mu      sync.Mutex
	procs   []*Process
	stopped bool
	// ctx is cancelled by Stop; exec.Cmd turns that into the signals.
	ctx    context.Context
	cancel context.CancelFunc
	// waiters holds one goroutine per process, reaping it; each ends when
	// its process exits, which cancelling ctx guarantees.
	waiters sync.WaitGroup
}

// Process is one node's process.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logFile string
	// exited is closed once the process has exited and been reaped; exitErr
	// and unexpected are written before, and read only after.
	exited     chan struct{}
	exitErr    error
	unexpected bool // it exited before the devnet stopped it
	// killed says the chaos mode killed it on purpose: set before the
	// SIGKILL, read after exited is closed.
	killed atomic.Bool
}

// Name is the node's name, e.g. pool-0.
func (p *Process) Name() string { return p.name }

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogFile is the file the process's output is appended to.
func (p *Process) LogFile() string { return p.logFile }

// Unexpected reports whether the process exited before Stop stopped it;
// false while it runs.
func (p *Process) Unexpected() bool { return p.ExitState() != "" && p.unexpected }

// Killed reports whether Kill killed it on purpose.
func (p *Process) Killed() bool { return p.killed.Load() }

// Start starts `exe run --config …` for every node, with the node's args
// after them (the chaos mode's), its output appended to the node's
// node.log. On an error the processes already started are stopped.
func Start(exe string, nodes []layout.Node, args map[string][]string, stopTimeout time.Duration) (*Processes, error) {
	ctx, cancel := context.WithCancel(context.Background())
	ps := &Processes{exe: exe, nodes: nodes, args: args, stopTimeout: stopTimeout, ctx: ctx, cancel: cancel}
	for _, n := range nodes {
		p, err := ps.start(exe, n)
		if err != nil {
			ps.Stop()
			return nil, fmt.Errorf("starting %s: %w", n.Name, err)
		}
		ps.procs = append(ps.procs, p)
	}
	return ps, nil
}

func (ps *Processes) start(exe string, n layout.Node) (*Process, error) {
	logPath := filepath.Join(n.Dir, layout.NodeLogFileName)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ps.ctx, exe, append([]string{"run", "--config", n.ConfigFile}, ps.args[n.Name]...)...)
	cmd.Dir = n.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = ChildProcAttr()
	cmd.Cancel = func() error {
		// A node the chaos mode froze must run again to hear SIGTERM.
		_ = continueProcess(cmd.Process)
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	cmd.WaitDelay = ps.stopTimeout
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	p := &Process{name: n.Name, cmd: cmd, logFile: logPath, exited: make(chan struct{})}
	ps.waiters.Go(func() {
		p.exitErr = cmd.Wait()
		p.unexpected = ps.ctx.Err() == nil && !p.killed.Load()
		logFile.Close()
		close(p.exited)
	})
	return p, nil
}

// Stop stops every process and returns once all have exited. It may be
// called again, to no effect.
func (ps *Processes) Stop() {
	ps.mu.Lock()
	ps.stopped = true
	ps.mu.Unlock()
	ps.cancel()
	ps.waiters.Wait()
}

// All is the current process of every node, in node order.
func (ps *Processes) All() []*Process {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return slices.Clone(ps.procs)
}

// Proc is node i's current process.
func (ps *Processes) Proc(i int) *Process {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.procs[i]
}

// Kill sends node i's process SIGKILL, as kill -9 does, and waits until it
// has been reaped.
func (ps *Processes) Kill(i int) error {
	p := ps.Proc(i)
	p.killed.Store(true)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing %s: %w", p.name, err)
	}
	<-p.exited
	return nil
}

// Restart starts node i again, with the command line Run printed for it,
// once its process has exited.
func (ps *Processes) Restart(i int) (*Process, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	old := ps.procs[i]
	select {
	case <-old.exited:
	default:
		return nil, fmt.Errorf("restarting %s: it still runs (pid %d)", old.name, old.cmd.Process.Pid)
	}
	if ps.stopped {
		return nil, fmt.Errorf("restarting %s: the devnet is stopping", old.name)
	}
	p, err := ps.start(ps.exe, ps.nodes[i])
	if err != nil {
		return nil, fmt.Errorf("restarting %s: %w", old.name, err)
	}
	ps.procs[i] = p
	return p, nil
}

// Freeze stops node i's process with SIGSTOP; Thaw lets it go on with
// SIGCONT.
func (ps *Processes) Freeze(i int) error {
	p := ps.Proc(i)
	if err := stopProcess(p.cmd.Process); err != nil {
		return fmt.Errorf("freezing %s: %w", p.name, err)
	}
	return nil
}

func (ps *Processes) Thaw(i int) error {
	p := ps.Proc(i)
	if err := continueProcess(p.cmd.Process); err != nil {
		return fmt.Errorf("thawing %s: %w", p.name, err)
	}
	return nil
}

// ExitState is "" while p runs, else how it ended: "stopped" for a clean
// exit after Stop's SIGTERM (exec.Cmd reports that as the context's error).
func (p *Process) ExitState() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	switch {
	case p.exitErr == nil:
		return "exited"
	case errors.Is(p.exitErr, context.Canceled):
		return "stopped"
	case p.killed.Load():
		return "killed by the chaos mode"
	}
	return "exited: " + p.exitErr.Error()
}

// CommandLine is the shell command that starts this node again by hand,
// with the output going where the devnet sends it.
func (p *Process) CommandLine() string {
	words := make([]string, len(p.cmd.Args))
	for i, a := range p.cmd.Args {
		words[i] = shellQuote(a)
	}
	return strings.Join(words, " ") + " >>" + shellQuote(p.logFile) + " 2>&1"
}

// shellQuote quotes s for a POSIX shell, leaving plain words alone.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
