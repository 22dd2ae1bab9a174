// Package machine describes the machine a benchmark ran on and what it did
// to the process meanwhile: CPU and Go runtime, load average, scheduling
// delays, garbage collections, and huge pages for tables that want them.
//
// Invariants: every probe degrades to "unknown" (an empty string, -1, or
// default pages) where the OS does not offer it; none fails a run.
// It never measures a benchmark's own work.
package machine

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// Description is where a run ran: figures from a shared machine are read
// with its load in mind.
type Description struct {
	CPU        string `json:"cpu"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15-minute load at the start.
	LoadAvg string `json:"load_avg,omitempty"`
}

// Describe is this machine, now.
func Describe() Description {
	return Description{CPU: cpuModel(), CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(), LoadAvg: LoadAverage()}
}

// Write prints the description on one line.
func (m Description) Write(w io.Writer) {
	fmt.Fprintf(w, "machine: %s, %d CPUs, GOMAXPROCS %d, %s", m.CPU, m.CPUs, m.GOMAXPROCS, m.GoVersion)
	if m.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", m.LoadAvg)
	}
	fmt.Fprintln(w)
}

// LoadAverage is the system's load (/proc/loadavg: 1, 5, 15 minutes), ""
// where there is none.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(b))
	if len(fields) < 3 {
		return ""
	}
	return strings.Join(fields[:3], " ")
}

// cpuModel is /proc/cpuinfo's model name, or the architecture.
func cpuModel() string {
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}
