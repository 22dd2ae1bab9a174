package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// events is a go test -json run of three packages: a, whose TestSlow and
// TestQuick pass; b, whose TestBroken fails (a subtest with it) while
// TestFine passes; and c, which has no test files.
const events = `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestSlow"}
{"Action":"output","Package":"a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"a","Test":"TestSlow","Output":"--- PASS: TestSlow (12.50s)\n"}
{"Action":"pass","Package":"a","Test":"TestSlow","Elapsed":12.5}
{"Action":"run","Package":"a","Test":"TestQuick"}
{"Action":"pass","Package":"a","Test":"TestQuick","Elapsed":0.01}
{"Action":"output","Package":"a","Output":"PASS\n"}
{"Action":"output","Package":"a","Output":"ok  \ta\t12.6s\n"}
{"Action":"pass","Package":"a","Elapsed":12.6}
{"Action":"start","Package":"b"}
{"Action":"run","Package":"b","Test":"TestBroken"}
{"Action":"run","Package":"b","Test":"TestBroken/case"}
{"Action":"output","Package":"b","Test":"TestBroken/case","Output":"    b_test.go:9: got 2, want 3\n"}
{"Action":"output","Package":"b","Test":"TestBroken/case","Output":"    --- FAIL: TestBroken/case (0.00s)\n"}
{"Action":"fail","Package":"b","Test":"TestBroken/case","Elapsed":0}
{"Action":"output","Package":"b","Test":"TestBroken","Output":"--- FAIL: TestBroken (3.20s)\n"}
{"Action":"fail","Package":"b","Test":"TestBroken","Elapsed":3.2}
{"Action":"run","Package":"b","Test":"TestFine"}
{"Action":"output","Package":"b","Test":"TestFine","Output":"fine says nothing a person needs\n"}
{"Action":"pass","Package":"b","Test":"TestFine","Elapsed":1.5}
{"Action":"output","Package":"b","Output":"FAIL\n"}
{"Action":"output","Package":"b","Output":"FAIL\tb\t4.8s\n"}
{"Action":"fail","Package":"b","Elapsed":4.8}
{"Action":"start","Package":"c"}
{"Action":"output","Package":"c","Output":"?   \tc\t[no test files]\n"}
{"Action":"skip","Package":"c","Elapsed":0}
`

// TestRun: the result lines and a failed test's output are written, a
// passing test's are not, the run is failed, and the slowest tests are
// listed, the slowest package first.
func TestRun(t *testing.T) {
	var out strings.Builder
	failed, err := run(strings.NewReader(events), &out)
	if err != nil || !failed {
		t.Fatalf("failed %v, %v; want a failed run", failed, err)
	}
	want := "ok  \ta\t12.6s\n" +
		"    b_test.go:9: got 2, want 3\n    --- FAIL: TestBroken/case (0.00s)\n--- FAIL: TestBroken (3.20s)\n" +
		"FAIL\nFAIL\tb\t4.8s\n" +
		"?   \tc\t[no test files]\n" +
		"\nthe slowest tests of each package (at most 3, of 1 s or more):\n" +
		"   12.6s a\n     12.5s TestSlow\n" +
		"    4.8s b\n      3.2s TestBroken\n      1.5s TestFine\n"
	if out.String() != want {
		t.Errorf("wrote:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestRunFailsWhatDidNotEnd: a package whose run was cut off fails the run
// and says so, with what its running test had said; a build failure fails
// it; no events at all is an error.
func TestRunFailsWhatDidNotEnd(t *testing.T) {
	var out strings.Builder
	cut := `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestHangs"}
{"Action":"output","Package":"a","Test":"TestHangs","Output":"=== RUN   TestHangs\n"}
`
	if failed, err := run(strings.NewReader(cut), &out); err != nil || !failed ||
		!strings.Contains(out.String(), "the input ended before these packages' tests did: a") {
		t.Errorf("a cut run: failed %v, %v; wrote:\n%s", failed, err, out.String())
	}
	out.Reset()
	died := cut + `{"Action":"output","Package":"a","Output":"panic: test timed out after 30m0s\n"}
{"Action":"fail","Package":"a","Elapsed":1800}
`
	if failed, err := run(strings.NewReader(died), &out); err != nil || !failed ||
		!strings.Contains(out.String(), "panic: test timed out after 30m0s\n=== RUN   TestHangs\n") {
		t.Errorf("a package that died: failed %v, %v; wrote:\n%s", failed, err, out.String())
	}
	out.Reset()
	build := `{"ImportPath":"x [x.test]","Action":"build-output","Output":"x/x.go:3:1: syntax error\n"}
{"ImportPath":"x [x.test]","Action":"build-fail"}
{"Action":"start","Package":"x"}
{"Action":"output","Package":"x","Output":"FAIL\tx [build failed]\n"}
{"Action":"fail","Package":"x","Elapsed":0}
`
	if failed, err := run(strings.NewReader(build), &out); err != nil || !failed || !strings.Contains(out.String(), "syntax error") {
		t.Errorf("a build failure: failed %v, %v; wrote:\n%s", failed, err, out.String())
	}
	if _, err := run(strings.NewReader(""), &out); err == nil {
		t.Error("no events: no error")
	}
}

// TestCIRunsTheREADMECommand: .ci/run's last command is the test command
// the README gives, word for word, so that what CI runs is what a person
// types.
func TestCIRunsTheREADMECommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	command := regexp.MustCompile("(?m)^go test .*$").FindString(string(readme))
	if command == "" || !strings.Contains(command, "| go run ./internal/testtimes") {
		t.Fatalf("README.md gives no test command piped into testtimes: %q", command)
	}
	lines := strings.Split(strings.TrimSpace(string(ci)), "\n")
	if last := lines[len(lines)-1]; last != command {
		t.Errorf(".ci/run ends with\n\t%s\nthe README's test command is\n\t%s", last, command)
	}
}
