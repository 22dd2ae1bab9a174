package pause

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// For waits the whole duration on a live context, and returns false as
// soon as the context ends, on virtual time.
func TestFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !For(t.Context(), time.Minute) || time.Since(start) != time.Minute {
			t.Errorf("a live context: waited %v", time.Since(start))
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		if For(ctx, time.Hour) || time.Since(start) != time.Second {
			t.Errorf("a context ending after 1 s: waited %v", time.Since(start))
		}
	})
}
