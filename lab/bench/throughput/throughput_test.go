package throughput

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/lab/bench/benchtest"
	"github.com/leiosnode/leiosnode/lab/bench/machine"
	"github.com/leiosnode/leiosnode/lab/devnet/report"
	"github.com/leiosnode/leiosnode/lab/load"
)

// orphanerEnv makes the test binary start a busy loop, print its pid and
// exit without stopping it: a bench that died.
const orphanerEnv = "LEIOSBENCH_TEST_ORPHANER"

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(busyLoopEnv) != "":
		spinForever()
	case os.Getenv(orphanerEnv) != "":
		b, err := startBusyLoop()
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(b.pid)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestThroughputRates(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []float64
	}{
		{"default", nil, []float64{500, 1000, 2000, 3000}},
		{"quick", []string{"--quick"}, []float64{500, 1000, 2000}},
		{"sustainable", []string{"--sustainable", "800"}, []float64{400, 800, 1600, 2400}},
		{"quick and sustainable", []string{"--quick", "--sustainable", "800"}, []float64{400, 800, 1600}},
		{"rates win", []string{"--sustainable", "800", "--rates", "100, 200"}, []float64{100, 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := NewCommand()
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			var f throughputFlags
			f.rates, _ = cmd.Flags().GetString("rates")
			f.sustainable, _ = cmd.Flags().GetFloat64("sustainable")
			f.quick, _ = cmd.Flags().GetBool("quick")
			got, err := f.offeredRates()
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("rates %v (%v), want %v", got, err, tt.want)
			}
		})
	}
	if _, err := (throughputFlags{rates: "100,x"}).offeredRates(); err == nil {
		t.Error("--rates 100,x accepted")
	}
	if _, err := (throughputFlags{sustainable: -1}).offeredRates(); err == nil {
		t.Error("--sustainable -1 accepted")
	}
}

func TestThroughputFlagsValidate(t *testing.T) {
	ok := throughputFlags{nodes: 3, duration: 3 * time.Minute, warmup: time.Minute}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []throughputFlags{
		{nodes: 0, duration: time.Minute},
		{nodes: 3, duration: time.Minute, warmup: time.Minute},
		{nodes: 3, duration: time.Minute, warmup: -time.Second},
	} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// fakeRunReport is a devnet report as a run at rate would write it.
func fakeRunReport(rate, onChain, refused float64, pinned *report.MempoolPinned) report.Report {
	return report.Report{
		Txs: &load.Report{Lost: 2, InMempoolAtEnd: 40},
		Targets: &report.Targets{
			OfferedPerSecond: rate, AdmittedPerSecond: rate - refused, RefusedPerSecond: refused, OnChainPerSecond: onChain,
			EBsAnnounced: 20, EBsCertified: 8, CertifiedShare: 0.4, CertifiedPer30s: []int{3, 1, 4},
			Latency:        &load.Latency{P50Ms: 2100, P95Ms: 4700},
			MempoolPinned:  pinned,
			RefusedByNodes: map[string]uint64{"queue-delay": 12},
		},
		CPU: &report.CPUReport{MeanSecondsPerKTx: 0.45, RatioToFloor: 7.5, Floor: &report.CPUFloor{FloorSecondsPerKTx: 0.06}},
	}
}

func writeRunReport(t *testing.T, r report.Report) string {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A cell is the run's figures over its measured span, from its report.
func TestReadThroughputCell(t *testing.T) {
	c, err := readThroughputCell(writeRunReport(t, fakeRunReport(2000, 1100, 300, &report.MempoolPinned{Seconds: 12, Node: "node-1"})), 2000)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate != 2000 || c.Offered != 2000 || c.Admitted != 1700 || c.RefusedPerSecond != 300 || c.OnChain != 1100 {
		t.Errorf("rates %+v", c)
	}
	if c.CertifiedShare != 0.4 || c.MinCertifiedPer30s != 1 || c.LatencyP95Ms != 4700 || c.Lost != 2 || c.InMempool != 40 {
		t.Errorf("targets %+v", c)
	}
	if c.MempoolPinnedSeconds == nil || *c.MempoolPinnedSeconds != 12 || c.CPUPerKTx != 0.45 || c.FloorPerKTx != 0.06 || c.RatioToFloor != 7.5 {
		t.Errorf("pinned %v, CPU %+v", c.MempoolPinnedSeconds, c)
	}
	// A run that did not outlast its warm-up has no figures to give.
	noSpan := fakeRunReport(2000, 1100, 300, nil)
	noSpan.Targets = nil
	if _, err := readThroughputCell(writeRunReport(t, noSpan), 2000); err == nil || !strings.Contains(err.Error(), "warm-up") {
		t.Errorf("a report without targets: %v", err)
	}
}

// The table gives every figure of every rate, says what was measured and
// where, and the plot is drawn.
func TestThroughputTableAndPlot(t *testing.T) {
	r := &throughputReport{Nodes: 3, Duration: "3m0s", Warmup: "1m0s", Hog: true, Machine: machine.Description{CPU: "test CPU", CPUs: 2}, Measured: throughputMeasured, Floor: report.FloorDefinition}
	for _, rate := range []float64{500, 1000, 2000} {
		var pinned *report.MempoolPinned
		if rate == 2000 {
			pinned = &report.MempoolPinned{Seconds: 12}
		}
		c, err := readThroughputCell(writeRunReport(t, fakeRunReport(rate, min(rate, 1000), max(rate-1100, 0), pinned)), rate)
		if err != nil {
			t.Fatal(err)
		}
		c.HogCores = 0.98
		r.Cells = append(r.Cells, c)
	}
	var out bytes.Buffer
	r.Write(&out)
	for _, want := range []string{
		"one core taken by a busy loop",
		"machine: test CPU, 2 CPUs",
		"refused/s",
		"  2000     2000     1100     900.0     1000    40%         1   4.70     2       12    0.450   0.060   7.5×",
		"   500      500      500       0.0      500    40%         1   4.70     2        -",
		"refused by the nodes: queue-delay 12; the busy loop took 0.98 cores",
		"measured: ",
		report.FloorDefinition,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	path := filepath.Join(t.TempDir(), "throughput.png")
	if err := plotThroughput(r, path); err != nil {
		t.Fatal(err)
	}
	benchtest.CheckPNG(t, path)
}

// The busy loop is another process, and is gone once stopped; stopping it
// again is harmless.
func TestBusyLoop(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	b, err := startBusyLoop()
	if err != nil {
		t.Fatal(err)
	}
	if !processAlive(b.pid) {
		t.Fatalf("busy loop pid %d is not running", b.pid)
	}
	if cores := b.stop(); cores < 0 {
		t.Errorf("the loop took %v cores", cores)
	}
	if processAlive(b.pid) {
		t.Errorf("busy loop pid %d still runs after stop", b.pid)
	}
	b.stop()
}

// A bench that dies without stopping its busy loop takes the loop with it
// (on Linux, the kernel kills it).
func TestBusyLoopDiesWithTheBench(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux kills a child when its parent dies")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanerEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the orphaner said %q", out)
	}
	// The kernel's signal is asynchronous: wait for it, for as long as a
	// busy machine could take to deliver it.
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil && processAlive(pid) {
			_ = p.Kill()
		}
	})
	waittest.Until(t, fmt.Sprintf("the busy loop pid %d ending with the bench that started it", pid), func() bool { return !processAlive(pid) })
}

// processAlive says whether pid runs: /proc has it, and not as a zombie
// (a killed child whose parent died waits for init to reap it).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the command may hold spaces and parentheses.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}
