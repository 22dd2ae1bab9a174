// Package benchtest holds what the benchmarks' tests share: running a
// benchmark's command, and what they check of every run's files (a plot is
// a PNG of a readable size).
//
// It never runs a benchmark; only tests import it.
package benchtest

import (
	"bytes"
	"image/png"
	"os"
	"testing"

	"github.com/spf13/cobra"
)

// Execute runs cmd with args and returns what it wrote to its standard
// output and to its standard error (the progress lines).
func Execute(cmd *cobra.Command, args ...string) (out, progress string, err error) {
	var o, p bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&p)
	cmd.SetArgs(args)
	err = cmd.Execute()
	return o.String(), p.String(), err
}

// Run is Execute for a run that must succeed: a failure fails t with the
// progress lines.
func Run(t testing.TB, cmd *cobra.Command, args ...string) string {
	t.Helper()
	out, progress, err := Execute(cmd, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress)
	}
	return out
}

// CheckPNG fails t unless path is a PNG of at least 300 × 200 pixels.
func CheckPNG(t testing.TB, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width < 300 || cfg.Height < 200 {
		t.Fatalf("%s: %v, %dx%d", path, err, cfg.Width, cfg.Height)
	}
}
