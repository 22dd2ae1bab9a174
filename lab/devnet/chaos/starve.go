package chaos

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/internal/pause"
)

// The starve fault's duty cycle: each node stopped for starveStopped, then
// running for starveRunning, over and over.
const (
	starveStopped = 900 * time.Millisecond
	starveRunning = 100 * time.Millisecond
)

// starvation runs the duty cycle on some nodes until it is stopped.
type starvation struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
	mu     sync.Mutex // guards err
	err    error      // the first failure to stop or continue a node
}

// fail keeps the first failure.
func (st *starvation) fail(err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.err == nil {
		st.err = err
	}
}

func (c *devnetChaos) starve(nodes []int) error {
	if c.starving != nil {
		return errors.New("the nodes are starved already")
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &starvation{cancel: cancel}
	// Each node's cycle starts a share of the period after the one before,
	// as processes that share an overloaded machine run at different times:
	// none hears its peers at once when it runs.
	period := starveStopped + starveRunning
	for k, i := range nodes {
		phase := period * time.Duration(k) / time.Duration(len(nodes))
		st.done.Go(func() {
			if !pause.For(ctx, phase) {
				return
			}
			for {
				st.fail(c.procs.Freeze(i))
				stopped := pause.For(ctx, starveStopped)
				st.fail(c.procs.Thaw(i))
				if !stopped || !pause.For(ctx, starveRunning) {
					return
				}
			}
		})
	}
	c.starving = st
	return nil
}

// feed ends the starvation: every node runs again.
func (c *devnetChaos) feed() error {
	st := c.starving
	if st == nil {
		return nil
	}
	c.starving = nil
	st.cancel()
	st.done.Wait()
	// A node stopped when the cycle ended is running again: every cycle
	// ends with a thaw.
	return st.err
}
