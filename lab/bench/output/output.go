// Package output is what every benchmark of leiosbench writes besides
// measuring: its tables, the same figures as one JSON document, its PNG
// plots, and its targets judged met or not.
//
// Invariants: a report's JSON holds every figure its tables print; a bad
// plots directory fails before a run, not after minutes of measuring.
// It never measures anything and never knows a benchmark's types.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Report is what every benchmark returns: printed as tables, and written
// as one indented JSON document with --json FILE.
type Report interface{ Write(io.Writer) }

// Flags are what the store benchmarks (txcache, mempool, txsubmission)
// write besides the tables they print: the same figures as JSON, and PNG
// plots.
type Flags struct {
	JSON  string
	Plots string
}

// Register adds --json and --plots to fs.
func (o *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&o.JSON, "json", "", "also write the report, every figure of the tables, to this JSON file")
	fs.StringVar(&o.Plots, "plots", ".", `write the PNG plots into this directory ("" for none)`)
}

// MakePlotsDir makes the plots directory ("" for none) before a long run,
// so that a bad --plots fails at once, not after minutes of measuring.
func (o Flags) MakePlotsDir() error {
	if o.Plots == "" {
		return nil
	}
	if err := os.MkdirAll(o.Plots, 0o755); err != nil {
		return fmt.Errorf("--plots %s: %w", o.Plots, err)
	}
	return nil
}

// Emit prints r's tables, writes the JSON file if asked, and draws each
// plot (file name → how to draw it) into the plots directory.
func (o Flags) Emit(cmd *cobra.Command, r Report, plots map[string]func(path string) error) error {
	r.Write(cmd.OutOrStdout())
	if o.JSON != "" {
		if err := WriteJSON(o.JSON, r); err != nil {
			return fmt.Errorf("--json %s: %w", o.JSON, err)
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "report written to", o.JSON)
	}
	if o.Plots == "" {
		return nil
	}
	if err := o.MakePlotsDir(); err != nil {
		return err
	}
	names := make([]string, 0, len(plots))
	for name := range plots {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		path := filepath.Join(o.Plots, name)
		if err := plots[name](path); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "plot written to", path)
	}
	return nil
}

// Print prints r's tables and, if jsonPath is set, writes r there: the
// output of the benchmarks without a plots directory.
func Print(cmd *cobra.Command, r Report, jsonPath string) error {
	return Flags{JSON: jsonPath}.Emit(cmd, r, nil)
}

// UnlessGiven applies a --quick default to a flag not given explicitly.
func UnlessGiven(cmd *cobra.Command, flag string, apply func()) {
	if !cmd.Flags().Changed(flag) {
		apply()
	}
}

// WriteJSON writes r to path as one indented JSON document.
func WriteJSON(path string, r any) error {
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

// ReadJSON reads the JSON document a run wrote to path into r.
func ReadJSON(path string, r any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, r); err != nil {
		return fmt.Errorf("%s is not one JSON document: %w\n%s", path, err, raw)
	}
	return nil
}

// Duration prints d with three significant digits at most.
func Duration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%dns", d.Nanoseconds())
}
