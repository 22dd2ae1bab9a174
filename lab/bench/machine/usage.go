package machine

import (
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Usage is what the Go runtime and the machine did to the process during
// one cell of a benchmark: it tells a stall that is the measured code's
// from one any goroutine of the process would have suffered.
type Usage struct {
	// LoadAvg is /proc/loadavg's 1-minute figure at the cell's start.
	LoadAvg string `json:"load_avg"`
	// GCCycles is the garbage collections completed during the cell, and
	// AllocBytesPerS the heap allocation rate that paced them.
	GCCycles       uint64  `json:"gc_cycles"`
	AllocBytesPerS float64 `json:"alloc_bytes_per_s"`
	// MaxSchedLatencyNs is the longest any goroutine of the process waited
	// runnable for a P (the Go runtime's /sched/latencies histogram over the
	// cell, the lower bound of its highest bucket); SchedLatencyP99Ns its
	// 99th percentile.
	MaxSchedLatencyNs int64 `json:"max_sched_latency_ns"`
	SchedLatencyP99Ns int64 `json:"sched_latency_p99_ns"`
	// OSRunDelayMsPerS is how long the process's threads waited runnable
	// for a CPU at the OS level (Linux schedstat), per second of the cell:
	// the machine's other load. -1 where schedstat is unavailable.
	OSRunDelayMsPerS float64 `json:"os_run_delay_ms_per_s"`
}

// Sample is the cumulative counters Usage is the difference of.
type Sample struct {
	at         time.Time
	loadAvg    string
	samples    []metrics.Sample
	osRunDelay time.Duration
	osOK       bool
}

const (
	metricGCCycles = "/gc/cycles/total:gc-cycles"
	metricAllocs   = "/gc/heap/allocs:bytes"
	metricSchedLat = "/sched/latencies:seconds"
)

// TakeSample reads the counters now.
func TakeSample() Sample {
	s := Sample{at: time.Now(), loadAvg: loadAvg1()}
	s.samples = []metrics.Sample{{Name: metricGCCycles}, {Name: metricAllocs}, {Name: metricSchedLat}}
	metrics.Read(s.samples)
	s.osRunDelay, s.osOK = osRunDelay()
	return s
}

// since is what happened between start and s.
func (s Sample) Since(start Sample) Usage {
	m := Usage{LoadAvg: start.loadAvg, OSRunDelayMsPerS: -1}
	secs := s.at.Sub(start.at).Seconds()
	m.GCCycles = s.samples[0].Value.Uint64() - start.samples[0].Value.Uint64()
	m.AllocBytesPerS = float64(s.samples[1].Value.Uint64()-start.samples[1].Value.Uint64()) / secs
	now, then := s.samples[2].Value.Float64Histogram(), start.samples[2].Value.Float64Histogram()
	var total uint64
	delta := make([]uint64, len(now.Counts))
	for i := range now.Counts {
		delta[i] = now.Counts[i] - then.Counts[i]
		total += delta[i]
	}
	var seen uint64
	p99Found := false
	for i, n := range delta {
		if n == 0 {
			continue
		}
		lower := time.Duration(max(now.Buckets[i], 0) * float64(time.Second))
		seen += n
		if !p99Found && seen*100 >= total*99 {
			m.SchedLatencyP99Ns, p99Found = int64(lower), true
		}
		m.MaxSchedLatencyNs = int64(lower)
	}
	if s.osOK && start.osOK {
		m.OSRunDelayMsPerS = float64(s.osRunDelay-start.osRunDelay) / float64(time.Millisecond) / secs
	}
	return m
}

// loadAvg1 is the 1-minute load average (loadAverage's first figure), ""
// where there is none.
func loadAvg1() string {
	if f := strings.Fields(LoadAverage()); len(f) > 0 {
		return f[0]
	}
	return ""
}

// osRunDelay is the time the process's threads have spent runnable,
// waiting for a CPU, at the OS level: the second field of each thread's
// /proc/self/task/*/schedstat. Threads that ended take their share with
// them, which the Go runtime's few long-lived threads make negligible.
func osRunDelay() (time.Duration, bool) {
	paths, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(paths) == 0 {
		return 0, false
	}
	var total time.Duration
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(raw))
		if len(f) < 2 {
			return 0, false
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, false
		}
		total += time.Duration(ns)
	}
	return total, true
}
