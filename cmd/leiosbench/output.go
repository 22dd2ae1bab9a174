package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// outputFlags are what the store benchmarks (txcache, mempool,
// txsubmission) write besides the tables they print: the same figures as
// JSON, and PNG plots.
type outputFlags struct {
	json  string
	plots string
}

func (o *outputFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.json, "json", "", "also write the report, every figure of the tables, to this JSON file")
	fs.StringVar(&o.plots, "plots", ".", `write the PNG plots into this directory ("" for none)`)
}

// makePlotsDir makes the plots directory ("" for none) before a long run,
// so that a bad --plots fails at once, not after minutes of measuring.
func (o outputFlags) makePlotsDir() error {
	if o.plots == "" {
		return nil
	}
	if err := os.MkdirAll(o.plots, 0o755); err != nil {
		return fmt.Errorf("--plots %s: %w", o.plots, err)
	}
	return nil
}

// emit prints r's tables, writes the JSON file if asked, and draws each
// plot (file name → how to draw it) into the plots directory.
func (o outputFlags) emit(cmd *cobra.Command, r report, plots map[string]func(path string) error) error {
	r.write(cmd.OutOrStdout())
	if o.json != "" {
		if err := writeJSON(o.json, r); err != nil {
			return fmt.Errorf("--json %s: %w", o.json, err)
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "report written to", o.json)
	}
	if o.plots == "" {
		return nil
	}
	if err := o.makePlotsDir(); err != nil {
		return err
	}
	names := make([]string, 0, len(plots))
	for name := range plots {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		path := filepath.Join(o.plots, name)
		if err := plots[name](path); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "plot written to", path)
	}
	return nil
}

// unlessGiven applies a --quick default to a flag not given explicitly.
func unlessGiven(cmd *cobra.Command, flag string, apply func()) {
	if !cmd.Flags().Changed(flag) {
		apply()
	}
}

// verdict is one target of a benchmark, judged against its run.
type verdict struct {
	What     string `json:"what"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// writeVerdicts prints the targets, met or not.
func writeVerdicts(w io.Writer, vs []verdict) {
	fmt.Fprintln(w, "\nTargets")
	for _, v := range vs {
		mark := "met"
		if !v.Met {
			mark = "NOT MET"
		}
		fmt.Fprintf(w, "  [%s] %s: %s\n", mark, v.What, v.Measured)
	}
}

func writeJSON(path string, r report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// machine is where a run ran: figures from a shared machine are read with
// its load in mind.
type machine struct {
	CPU        string `json:"cpu"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15-minute load at the start.
	LoadAvg string `json:"load_avg,omitempty"`
}

func describeMachine() machine {
	return machine{CPU: cpuModel(), CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(), LoadAvg: loadAverage()}
}

// loadAverage is the system's load (/proc/loadavg: 1, 5, 15 minutes), ""
// where there is none.
func loadAverage() string {
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

func (m machine) write(w io.Writer) {
	fmt.Fprintf(w, "machine: %s, %d CPUs, GOMAXPROCS %d, %s", m.CPU, m.CPUs, m.GOMAXPROCS, m.GoVersion)
	if m.LoadAvg != "" {
		fmt.Fprintf(w, "; load average at start %s", m.LoadAvg)
	}
	fmt.Fprintln(w)
}
