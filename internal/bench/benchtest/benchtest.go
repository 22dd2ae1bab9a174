// Package benchtest holds what the benchmarks' tests check of every run's
// files: a plot is a PNG of a readable size.
//
// It never runs a benchmark; only tests import it.
package benchtest

import (
	"image/png"
	"os"
	"testing"
)

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
