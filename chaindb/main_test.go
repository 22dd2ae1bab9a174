package chaindb

import (
	"flag"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines, runs the crash test's child when
// asked to (crashChildEnv), and runs fewer rapid checks under the race detector, which also turns
// on Pebble's invariant checks and makes every read about 20 times slower,
// unless the number was asked for (-rapid.checks or RAPID_CHECKS).
func TestMain(m *testing.M) {
	flag.Parse()
	if raceEnabled && os.Getenv("RAPID_CHECKS") == "" {
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
		if !set {
			flag.Set("rapid.checks", "25")
		}
	}
	if os.Getenv(crashChildEnv) != "" {
		crashChild()
		return
	}
	// chaindb starts no goroutine of its own, and Close stops Pebble's.
	goleak.VerifyTestMain(m)
}
