// Package pause waits out a duration unless a context ends first: the
// one wait of loops that pace themselves (a service's retries, a lab's
// hostile peers and its stops and starts of processes). It owns no
// goroutine and holds nothing past the call.
package pause

import (
	"context"
	"time"
)

// For waits d, and reports false if ctx ended first.
func For(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
