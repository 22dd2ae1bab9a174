//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/internal/waittest"
)

// requireBrowserEnv, set (to anything) by .ci/run, makes the browser test
// fail where it would skip for want of Chromium: in CI it must run.
const requireBrowserEnv = "LEIOSNODE_REQUIRE_BROWSER"

// TestDevnetLiveViewInBrowser runs a devnet under load with its live view
// on a free port, waits until the view's own event stream shows every node
// with blocks and an EB, then loads the page in headless Chromium and
// checks what it shows: every node by name, a tip past block 0 and the EB
// timeline's rows; and that the page renders to a screenshot. The devnet's
// --duration is only a ceiling: the test stops it once it has seen all.
func TestDevnetLiveViewInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a devnet and a browser for about half a minute")
	}
	chromium := findChromium(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	devnet := exec.Command(exe, "devnet", "--dir", filepath.Join(dir, "devnet"), "--nodes", "3", "--security-param", "3",
		"--tx-rate", "300", "--duration", "5m", "--ui", "127.0.0.1:0")
	devnet.Env = append(os.Environ(), asCLIEnv+"=cli")
	stdout, err := devnet.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	devnet.Stderr = devnet.Stdout
	if err := devnet.Start(); err != nil {
		t.Fatal(err)
	}
	defer devnet.Process.Kill() // only matters when the test fails half-way

	// The output is drained to the end, so that the devnet never waits on
	// it; the live view's address is handed over, and ended is closed
	// once the devnet has closed its output.
	urls, output, ended := make(chan string, 1), make(chan string, 1), make(chan struct{})
	go func() {
		var all strings.Builder
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			line := scanner.Text()
			all.WriteString(line + "\n")
			if url, ok := strings.CutPrefix(line, "live view: "); ok {
				urls <- url
			}
		}
		close(ended)
		output <- all.String()
	}()
	var url string
	select {
	case url = <-urls:
	case <-ended:
		t.Fatalf("the devnet ended before it printed 'live view: ':\n%s", <-output)
	case <-time.After(waittest.Hang):
		t.Fatalf("no 'live view: ' line after %v, a hang", waittest.Hang)
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/$`).MatchString(url) {
		t.Fatalf("live view at %q", url)
	}
	awaitFrame(t, url, func(f liveFrame) bool {
		for _, n := range f.Nodes {
			if n.Tip == nil || n.Tip.BlockNumber == 0 {
				return false
			}
		}
		return len(f.Nodes) == 3 && len(f.EBs) > 0
	})

	// The page shows the latest frame, and under load the devnet's poll of
	// a node can fail for a while (the node is then shown down): the page
	// is loaded again until it shows every node's tip and an EB, for as
	// long as the devnet runs.
	var page string
	for attempt := 1; ; attempt++ {
		page = runChromium(t, chromium, "--dump-dom", url)
		lacks := pageLacks(page)
		if len(lacks) == 0 {
			break
		}
		select {
		case <-ended:
			t.Fatalf("in %d loads while the devnet ran, the page never showed all it should; the last lacks %s:\n%s\ndevnet output:\n%s",
				attempt, strings.Join(lacks, ", "), page, <-output)
		default:
		}
		t.Logf("load %d: the page lacks %s; again", attempt, strings.Join(lacks, ", "))
	}

	shot := filepath.Join(dir, "devnet-ui.png")
	runChromium(t, chromium, "--screenshot="+shot, "--window-size=1400,1000", url)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.DecodeConfig(f); err != nil || img.Width != 1400 || img.Height != 1000 {
		t.Errorf("the screenshot: %+v, %v", img, err)
	}

	if err := devnet.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	out := <-output
	if err := devnet.Wait(); err != nil {
		t.Errorf("devnet after SIGINT: %v\n%s", err, out)
	}
	if t.Failed() {
		t.Logf("devnet output:\n%s\npage:\n%s", out, page)
	}
}

// pageLacks says what of a running devnet the page's DOM does not show:
// a row per node, a tip past block 0, an EB row.
func pageLacks(page string) []string {
	var lacks []string
	for _, name := range []string{"node-0", "node-1", "node-2"} {
		if !strings.Contains(page, `data-node="`+name+`"`) {
			lacks = append(lacks, "a row of "+name)
		}
	}
	if tip := regexp.MustCompile(`class="tip">#(\d+)`).FindStringSubmatch(page); tip == nil || tip[1] == "0" {
		lacks = append(lacks, "a tip past block 0")
	}
	if !strings.Contains(page, `class="eb" data-slot="`) {
		lacks = append(lacks, "an EB row")
	}
	return lacks
}

// liveFrame is the part of a live view's frame this test reads.
type liveFrame struct {
	Nodes []struct {
		Tip *struct {
			BlockNumber uint64 `json:"blockNumber"`
		} `json:"tip"`
	} `json:"nodes"`
	EBs []json.RawMessage `json:"ebs"`
}

// awaitFrame reads the live view's event stream until a frame satisfies
// done; the stream ends with the devnet.
func awaitFrame(t *testing.T, url string, done func(liveFrame) bool) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	events.Buffer(nil, 1<<20)
	var last string
	for events.Scan() {
		data, ok := strings.CutPrefix(events.Text(), "data: ")
		if !ok {
			continue
		}
		last = data
		var f liveFrame
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			t.Fatal(err)
		}
		if done(f) {
			return
		}
	}
	t.Fatalf("the devnet's run ended with no frame of every node with blocks and an EB (%v); the last:\n%s", events.Err(), last)
}

// runChromium loads url in headless Chromium with args and returns what
// it printed. --timeout, not --virtual-time-budget, ends the load: virtual
// time waits for the network to go idle, which an event stream never does.
func runChromium(t *testing.T, chromium string, args ...string) string {
	t.Helper()
	ctx := waittest.Context(t)
	userData, err := os.MkdirTemp("", "leiosnode-ui-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(userData)
	// --disable-dev-shm-usage: a container's small /dev/shm crashes
	// Chromium under load.
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + userData, "--timeout=5000"}
	for attempt := 1; ; attempt++ {
		cmd := exec.CommandContext(ctx, chromium, append(base, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil {
			return string(out)
		}
		// The browser crashing is not the page failing: once more.
		if exit, ok := errors.AsType[*exec.ExitError](err); ok && exit.ProcessState.Sys().(syscall.WaitStatus).Signaled() && attempt == 1 {
			t.Logf("chromium %s crashed (%v); again", strings.Join(args, " "), err)
			continue
		}
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
}

// findChromium returns the path of Chromium, and skips the test where
// there is none: a test never installs what it needs.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const missing = "no chromium in PATH: install Chromium (Debian: apt-get install chromium) to run this test"
	if os.Getenv(requireBrowserEnv) != "" {
		t.Fatalf("%s (%s is set: the test must run)", missing, requireBrowserEnv)
	}
	t.Skip(missing)
	return ""
}
