package waittest

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is a testing.TB whose Fatalf records the failure and ends the
// calling goroutine, as the testing package's does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	runtime.Goexit()
}

// TestUntil: a condition that comes true ends the wait, at once; one that
// never does fails the test past Hang, not before.
func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		calls := 0
		Until(t, "the third call", func() bool { calls++; return calls == 3 })
		if calls != 3 || time.Since(start) > 10*time.Millisecond {
			t.Errorf("%d calls in %v", calls, time.Since(start))
		}
		r := &recorder{TB: t}
		start = time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			Until(r, "never", func() bool { return false })
		}()
		<-done
		if r.failed == "" || time.Since(start) <= Hang {
			t.Errorf("failed %q after %v", r.failed, time.Since(start))
		}
	})
}

// TestRecv: a value sent is returned; a channel that stays silent fails
// the test after Hang.
func TestRecv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan int, 1)
		ch <- 7
		if v := Recv(t, ch, "seven"); v != 7 {
			t.Errorf("got %d", v)
		}
		r := &recorder{TB: t}
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			Recv(r, make(chan int), "nothing")
		}()
		<-done
		if r.failed == "" || time.Since(start) != Hang {
			t.Errorf("failed %q after %v", r.failed, time.Since(start))
		}
	})
}
