package mempool

import "context"

// fifoLock is a mutex granted in arrival order whose acquisition a context
// can abandon. Goroutines blocked sending on a channel are queued FIFO, and
// a receive hands the buffer slot straight to the first of them, so a late
// arrival cannot barge ahead.
type fifoLock chan struct{}

func newFIFOLock() fifoLock { return make(fifoLock, 1) }

func (l fifoLock) lock(ctx context.Context) error {
	// A free lock is taken even with ctx done: the caller's turn came.
	select {
	case l <- struct{}{}:
		return nil
	default:
	}
	select {
	case l <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l fifoLock) unlock() { <-l }
