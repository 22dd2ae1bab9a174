package cpuwork

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops what it started: the sampler's loop and the profiler's
// writer, the spinners, Pebble.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
