package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/ledger"
)

// instantNodeMux answers a node's submit routes at once without looking at
// the txs: every tx is admitted. onTxs, when set, is told how many txs
// each request admitted.
func instantNodeMux(onTxs func(n int)) *http.ServeMux {
	id := strings.Repeat("00", 32)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) { writeAPIJSON(w, http.StatusOK, struct{}{}) })
	mux.HandleFunc("POST /api/submit/tx", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeAPIJSON(w, http.StatusAccepted, id)
		if onTxs != nil {
			onTxs(1)
		}
	})
	mux.HandleFunc("POST /api/submit/txs", func(w http.ResponseWriter, r *http.Request) {
		var txs []cbor.RawMessage
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = cbor.Unmarshal(body, &txs)
		}
		if err != nil {
			writeAPIError(w, http.StatusBadRequest, err.Error())
			return
		}
		answers := make([]map[string]any, len(txs))
		for i := range answers {
			answers[i] = map[string]any{"status": http.StatusAccepted, "id": id}
		}
		writeAPIJSON(w, http.StatusOK, answers)
		if onTxs != nil {
			onTxs(len(txs))
		}
	})
	return mux
}

// instantNodesEnv makes the test binary the helper process of
// startInstantNodes: it serves that many instant nodes.
const instantNodesEnv = "LOAD_TEST_INSTANT_NODES"

// TestInstantNodesProcess is the helper process of startInstantNodes, not
// a test: it serves instant nodes on loopback, writes their URLs to
// stdout, one a line, and serves until its stdin closes.
func TestInstantNodesProcess(t *testing.T) {
	var count int
	if _, err := fmt.Sscan(os.Getenv(instantNodesEnv), &count); err != nil {
		t.Skip("the helper process of the firehose's CPU benchmark")
	}
	for range count {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = http.Serve(l, instantNodeMux(nil)) }()
		fmt.Printf("http://%s\n", l.Addr())
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startInstantNodes runs count instant nodes in a process of their own, so
// that the CPU of this one is the firehose's alone, and returns them.
func startInstantNodes(b *testing.B, count int) []Node {
	cmd := exec.Command(os.Args[0], "-test.run=^TestInstantNodesProcess$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", instantNodesEnv, count))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	var nodes []Node
	for len(nodes) < count && lines.Scan() {
		if url := lines.Text(); strings.HasPrefix(url, "http://") {
			nodes = append(nodes, Node{Name: fmt.Sprintf("node-%d", len(nodes)), URL: url})
		}
	}
	if len(nodes) < count {
		b.Fatalf("the instant nodes' process gave %d URLs of %d: %v", len(nodes), count, lines.Err())
	}
	return nodes
}

// BenchmarkFirehoseCPU measures the firehose's own CPU per tx offered, as
// the devnet runs it at 3,000 tx/s (30 chains over three nodes), against
// nodes in another process that admit every tx at once: the CPU time of
// this process (user and system) over the txs admitted, and the cores
// that makes at 3,000 tx/s. Run it with a count of txs, e.g.
// -benchtime=15000x (5 s).
func BenchmarkFirehoseCPU(b *testing.B) {
	const nodeCount, rate = 3, 3000
	if _, ok := cpuwork.ProcessTime(); !ok {
		b.Skip("no CPU clock here")
	}
	nodes := startInstantNodes(b, nodeCount)
	chains := FundedFor(rate)
	funds := newTestFunds(b, chains, 1<<50)
	f := newFirehose(ledger.DefaultParams(), nodes, funds.chains(nodeCount), apiclient.NewHTTPClient(), Options{Rate: rate})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for f.Counts().Admitted < uint64(b.N) && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()

	b.ResetTimer()
	before, _ := cpuwork.ProcessTime()
	f.Run(ctx)
	after, _ := cpuwork.ProcessTime()
	b.StopTimer()
	counts := f.Counts()
	cpu := after - before
	b.ReportMetric(float64(cpu.Microseconds())/float64(counts.Admitted), "cpu-µs/tx")
	b.ReportMetric(cpu.Seconds()/float64(counts.Admitted)*rate, "cores@3000tx/s")
	b.ReportMetric(float64(counts.Admitted)/b.Elapsed().Seconds(), "tx/s")
	b.ReportMetric(float64(counts.Admitted)/float64(max(1, counts.Posts)), "tx/POST")
}

// BenchmarkFirehoseCeiling measures the most txs a second the firehose can
// offer, as the devnet runs it (ten chains over three nodes, each tx built,
// signed and POSTed over loopback HTTP), against nodes that admit every tx
// at once without looking at it: whatever a devnet's firehose offers below
// this, its nodes held it back.
func BenchmarkFirehoseCeiling(b *testing.B) {
	const nodeCount, chainCount = 3, 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var admitted atomic.Int64
	instant := instantNodeMux(func(n int) {
		if admitted.Add(int64(n)) >= int64(b.N) {
			cancel()
		}
	})
	var nodes []Node
	for i := range nodeCount {
		srv := httptest.NewServer(instant)
		defer srv.Close()
		nodes = append(nodes, Node{Name: fmt.Sprintf("node-%d", i), URL: srv.URL})
	}
	funds := newTestFunds(b, chainCount, 1<<50)
	// A million txs a second per chain: far above what it can do, so it
	// goes as fast as it can.
	opts := Options{Rate: chainCount * 1e6}
	f := newFirehose(ledger.DefaultParams(), nodes, funds.chains(nodeCount), apiclient.NewHTTPClient(), opts)

	b.ResetTimer()
	f.Run(ctx)
	b.StopTimer()
	b.ReportMetric(float64(admitted.Load())/b.Elapsed().Seconds(), "tx/s")
	s := f.stats
	if s.Built > 0 {
		b.ReportMetric(float64(s.BuildTime.Microseconds())/float64(s.Built), "µs-build/tx")
	}
}
