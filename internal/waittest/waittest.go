// Package waittest bounds a test's waits for what it expects to happen.
// A wait ends as soon as the thing happens, and fails the test only past
// Hang, minutes beyond what the slowest machine takes: a verdict never
// depends on how busy the machine running the tests is, and a hang still
// ends in a failure that says what never came, before go test's own
// timeout kills the whole package without a word on it.
//
// It is for tests only.
package waittest

import (
	"context"
	"testing"
	"time"
)

// Hang is how long a test waits for something before it calls the wait a
// hang. What tests wait for takes milliseconds to, for a network of nodes
// on a slot clock, a minute on an idle machine; one busy with other suites
// under the race detector is slower by a few times.
const Hang = 5 * time.Minute

// Until calls done until it reports true, and fails the test, saying what
// it waited for, if that takes longer than Hang. Between calls it waits a
// millisecond at first, longer the longer the wait (at most 50 ms), so a
// quick condition is seen at once and a slow one costs no CPU.
func Until(t testing.TB, what string, done func() bool) {
	t.Helper()
	start := time.Now()
	for pause := time.Millisecond; !done(); pause = min(2*pause, 50*time.Millisecond) {
		if waited := time.Since(start); waited > Hang {
			t.Fatalf("%s: still not after %v, a hang", what, waited.Round(time.Second))
		}
		time.Sleep(pause)
	}
}

// Recv returns the next value ch delivers, and fails the test, saying what
// it waited for, if none comes within Hang.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Hang)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing after %v, a hang", what, Hang)
		panic("not reached")
	}
}

// Context is the test's context, ended also after Hang: for a call that
// waits on a context of its own.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), Hang)
	t.Cleanup(cancel)
	return ctx
}
