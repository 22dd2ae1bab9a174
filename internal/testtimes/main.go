// Command testtimes reads `go test -json` on its input and writes what
// `go test` would have written without -json — each package's result line,
// the output of every test that failed (and of every test still running
// when its package died), build errors — and then, per package, its
// slowest tests, so that the suite's time stays in sight. It exits 1 if a
// package or a build failed, or if the input ended before every package
// it started had ended: a shell without pipefail still sees the failure.
//
// The README's test command pipes into it:
//
//	go test -race -count=1 -timeout 30m -json ./... | go run ./internal/testtimes
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// slowest is how many of a package's tests are listed, and atLeast the
// time a test must take to be listed at all.
const (
	slowest = 3
	atLeast = 1.0 // seconds
)

func main() {
	failed, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// event is a TestEvent of go test -json, or a BuildEvent (ImportPath set).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
}

// pkg is what is known of one package's run.
type pkg struct {
	name    string
	elapsed float64
	ended   bool
	output  map[string]*strings.Builder // each running test's output, by test
	times   []testTime                  // its top-level tests that ended
}

type testTime struct {
	test    string
	seconds float64
}

// run copies in's events to out as go test's text and reports whether the
// run failed.
func run(in io.Reader, out io.Writer) (failed bool, err error) {
	pkgs := map[string]*pkg{}
	var order []string
	get := func(name string) *pkg {
		p, ok := pkgs[name]
		if !ok {
			p = &pkg{name: name, output: map[string]*strings.Builder{}}
			pkgs[name] = p
			order = append(order, name)
		}
		return p
	}
	events := 0
	scanner := bufio.NewScanner(in)
	scanner.Buffer(nil, 16<<20) // a test's line may be long
	for scanner.Scan() {
		line := scanner.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(out, "%s\n", line) // not an event: go's own words
			continue
		}
		events++
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Action == "build-fail":
			failed = true
		case e.Package == "":
		case e.Test == "":
			p := get(e.Package)
			switch e.Action {
			case "output":
				if e.Output != "PASS\n" {
					fmt.Fprint(out, e.Output)
				}
			case "pass", "skip":
				p.ended, p.elapsed = true, e.Elapsed
			case "fail":
				p.ended, p.elapsed, failed = true, e.Elapsed, true
				// Tests that never ended were running when it died (a
				// panic, the timeout): what they said is the why.
				for _, test := range slices.Sorted(maps.Keys(p.output)) {
					fmt.Fprint(out, p.output[test].String())
				}
				clear(p.output)
			}
		default:
			p := get(e.Package)
			switch e.Action {
			case "output":
				b, ok := p.output[e.Test]
				if !ok {
					b = &strings.Builder{}
					p.output[e.Test] = b
				}
				b.WriteString(e.Output)
			case "pass", "skip", "fail":
				if e.Action == "fail" {
					if b, ok := p.output[e.Test]; ok {
						fmt.Fprint(out, b.String())
					}
				}
				delete(p.output, e.Test)
				if !strings.Contains(e.Test, "/") {
					p.times = append(p.times, testTime{e.Test, e.Elapsed})
				}
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return true, err
	}
	if events == 0 {
		return true, fmt.Errorf("no test events on the input: is it go test -json's?")
	}
	var unfinished []string
	for _, name := range order {
		if !pkgs[name].ended {
			unfinished = append(unfinished, name)
		}
	}
	writeSlowest(out, pkgs, order)
	if len(unfinished) > 0 {
		fmt.Fprintf(out, "testtimes: the input ended before these packages' tests did: %s\n", strings.Join(unfinished, " "))
		failed = true
	}
	return failed, nil
}

// writeSlowest lists, per package, its slowest top-level tests of at least
// atLeast, the packages that took longest first.
func writeSlowest(out io.Writer, pkgs map[string]*pkg, order []string) {
	var listed []*pkg
	for _, name := range order {
		p := pkgs[name]
		slices.SortStableFunc(p.times, func(a, b testTime) int { return cmp.Compare(b.seconds, a.seconds) })
		p.times = slices.DeleteFunc(p.times, func(t testTime) bool { return t.seconds < atLeast })
		if len(p.times) > 0 {
			listed = append(listed, p)
		}
	}
	if len(listed) == 0 {
		return
	}
	slices.SortStableFunc(listed, func(a, b *pkg) int { return cmp.Compare(b.elapsed, a.elapsed) })
	fmt.Fprintf(out, "\nthe slowest tests of each package (at most %d, of %.0f s or more):\n", slowest, atLeast)
	for _, p := range listed {
		fmt.Fprintf(out, "%7.1fs %s\n", p.elapsed, p.name)
		for _, t := range p.times[:min(slowest, len(p.times))] {
			fmt.Fprintf(out, "  %7.1fs %s\n", t.seconds, t.test)
		}
	}
}
