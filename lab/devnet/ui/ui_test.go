package ui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus/consensustest"
	"github.com/leiosnode/leiosnode/internal/waittest"
)

var names = []string{"node-0", "node-1", "node-2", "node-3"}

// newView is the view of four pools of one stake each: a quorum of 3 of
// 4 seats.
func newView(t *testing.T) *View {
	t.Helper()
	var pools []consensustest.Pool
	for i, name := range names {
		pools = append(pools, consensustest.NewPool(name, byte(i+1)))
	}
	v, err := New(names, consensustest.Genesis(pools...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// observation is round n: node i's tip is block 10n+i, node-3 is down.
func observation(n int) Observation {
	o := Observation{At: time.Now(), Txs: Txs{Submitted: uint64(100 * n), OnChain: uint64(90 * n), PerSecond: 12.5}}
	for i := range names {
		if i == 3 {
			o.Nodes = append(o.Nodes, NodeObservation{Down: "exited (exit status 1)"})
			continue
		}
		st := &apitypes.Status{Tip: apitypes.TipStatus{BlockNumber: uint64(10*n + i), Hash: "ab12cd34ef"}, Mempool: apitypes.MempoolStatus{Txs: 7}}
		o.Nodes = append(o.Nodes, NodeObservation{Status: st})
	}
	return o
}

// serve serves v while the test runs.
func serve(t *testing.T, v *View) *httptest.Server {
	srv := httptest.NewServer(v.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// get is GET url; the body is closed when the test ends, before the
// server.
func get(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestQuorumVotes(t *testing.T) {
	if v := newView(t); v.seats != 4 || v.quorumVotes != 3 {
		t.Errorf("%d seats, quorum %d votes; want 4 and 3", v.seats, v.quorumVotes)
	}
}

func TestPageServed(t *testing.T) {
	resp := get(t, serve(t, newView(t)).URL+"/")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`new EventSource("events")`, `<svg id="ebs"`, "<style>"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// Self-contained: nothing loaded from elsewhere.
	for _, outside := range []string{"src=", "href=", "@import", "url("} {
		if strings.Contains(string(body), outside) {
			t.Errorf("the page loads something (%s)", outside)
		}
	}
}

// TestPageHoldsLatestFrame: the page comes with the latest frame in it,
// so it shows the devnet before its first event, and what the nodes said
// cannot end its script.
func TestPageHoldsLatestFrame(t *testing.T) {
	v := newView(t)
	srv := serve(t, v)
	page := func() string {
		body, _ := io.ReadAll(get(t, srv.URL+"/").Body)
		return string(body)
	}
	if page := page(); !strings.Contains(page, "const first = null;") {
		t.Error("the page before any frame holds one")
	}
	o := observation(1)
	o.Nodes[3].Down = "</script><script>alert(1)</script>"
	v.Observe(o)
	if page := page(); !strings.Contains(page, `const first = {"seq":1,`) || !strings.Contains(page, `"name":"node-2"`) {
		t.Error("the page lacks the latest frame")
	} else if strings.Count(page, "</script>") != strings.Count(string(pageHTML), "</script>") {
		t.Error("a frame ends the page's script")
	}
}

// readFrame reads the next event of an event stream as a frame.
func readFrame(t *testing.T, r *bufio.Reader) frame {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the events: %v", err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var f frame
			if err := json.Unmarshal([]byte(data), &f); err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
}

// TestEventsInOrder: a page that connects gets the latest frame, then
// every observation in the order it was handed over.
func TestEventsInOrder(t *testing.T) {
	v := newView(t)
	srv := serve(t, v)
	v.Observe(observation(1))
	resp := get(t, srv.URL+"/events")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	events := bufio.NewReader(resp.Body)
	for n := 1; n <= 5; n++ {
		if n > 1 {
			v.Observe(observation(n))
		}
		f := readFrame(t, events)
		if f.Seq != uint64(n) || f.Txs.Submitted != uint64(100*n) || len(f.Nodes) != 4 {
			t.Fatalf("event %d: seq %d, %d submitted, %d nodes", n, f.Seq, f.Txs.Submitted, len(f.Nodes))
		}
		for i, node := range f.Nodes[:3] {
			if node.Name != names[i] || node.Tip == nil || node.Tip.BlockNumber != uint64(10*n+i) || node.Mempool.Txs != 7 {
				t.Errorf("event %d: node %d is %+v", n, i, node)
			}
		}
		if down := f.Nodes[3]; down.Down != "exited (exit status 1)" || down.Tip != nil {
			t.Errorf("event %d: the node down is %+v", n, down)
		}
		if len(f.Rates) != n || f.Seats != 4 || f.QuorumVotes != 3 {
			t.Errorf("event %d: %d rates, %d seats, quorum %d", n, len(f.Rates), f.Seats, f.QuorumVotes)
		}
	}
}

// TestSlowPageDropsFrames: a page that reads nothing costs Observe
// nothing; what does not fit its queue is dropped and counted, and what
// it gets is in order.
func TestSlowPageDropsFrames(t *testing.T) {
	v := newView(t)
	p, _ := v.subscribe()
	for n := 1; n <= pageQueue+5; n++ {
		v.Observe(observation(n))
	}
	if got := v.Dropped(); got != 5 {
		t.Errorf("%d frames dropped, want 5", got)
	}
	for n := 1; n <= pageQueue; n++ {
		var f frame
		if err := json.Unmarshal(<-p.frames, &f); err != nil || f.Seq != uint64(n) {
			t.Fatalf("queued frame %d: seq %d, %v", n, f.Seq, err)
		}
	}
}

// TestStalledBrowser: a browser that stops reading its stream over the
// network never holds Observe up: once its socket and queue are full, its
// frames are dropped. The frames are counted, not timed: far fewer than
// fill any socket's buffers must do.
func TestStalledBrowser(t *testing.T) {
	v := newView(t)
	srv := serve(t, v)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /events HTTP/1.1\r\nHost: ui\r\n\r\n")
	var stalled *page
	waittest.Until(t, "the page connecting", func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		for p := range v.pages {
			stalled = p
		}
		return stalled != nil
	})
	// Frames of many EBs fill the socket's buffers soon: the page never
	// reads. A kernel's socket buffers hold a few MiB each way; 64 MiB of
	// frames, and the page's queue, are more than they can take.
	o := observation(1)
	o.Nodes[0].EBs = ebList(200)
	v.Observe(o)
	frameBytes := len(v.latest)
	most := pageQueue + (64<<20)/frameBytes
	observed := make(chan int, 1)
	go func() {
		n := 1
		for ; v.Dropped() == 0 && n < most; n++ {
			v.Observe(o)
		}
		observed <- n
	}()
	select {
	case n := <-observed:
		if v.Dropped() == 0 {
			t.Fatalf("%d frames of %d bytes observed for a page that reads nothing, none dropped", n, frameBytes)
		}
	case <-time.After(waittest.Hang):
		t.Errorf("Observe blocked on a page that reads nothing: no return in %v", waittest.Hang)
		// Take what Observe waits to queue until it is done, so that the
		// page's handler, the server and the test can end.
		for {
			select {
			case <-stalled.frames:
			case <-observed:
				return
			}
		}
	}
}

// TestGoneBrowser: a page that goes is forgotten, once a frame or two
// written to its closed stream fail. The test counts the frames its
// handler took, not the time they took.
func TestGoneBrowser(t *testing.T) {
	v := newView(t)
	srv := serve(t, v)
	v.Observe(observation(1))
	resp := get(t, srv.URL+"/events")
	readFrame(t, bufio.NewReader(resp.Body))
	resp.Body.Close()
	const frames = 50
	for n := 2; connected(v) > 0; n++ {
		if n > frames {
			t.Fatalf("the page that went is still connected after its handler took %d frames", frames)
		}
		v.Observe(observation(n)) // a write to the closed stream ends its handler
		waittest.Until(t, "the page's handler taking its frame, or going", func() bool { return queued(v) == 0 })
	}
}

func connected(v *View) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.pages)
}

// queued counts the frames waiting for the pages' handlers.
func queued(v *View) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for p := range v.pages {
		n += len(p.frames)
	}
	return n
}

// ebList is n EBs at slots 1..n, each announced at 10 ms and its body held
// at 20 ms.
func ebList(n int) []apitypes.EBTimes {
	var ebs []apitypes.EBTimes
	for slot := 1; slot <= n; slot++ {
		ebs = append(ebs, apitypes.EBTimes{Slot: uint64(slot), EbHash: fmt.Sprintf("%064x", slot),
			StageMs: apitypes.StageMs{EBStages: apitypes.EBStages[int64]{Announced: ms(10), Body: ms(20)}, Deadline: 600}})
	}
	return ebs
}

func ms(v int64) *int64 { return &v }

// TestEBFrames: the nodes' EB lists merge into the latest EBs, each stage
// from its first node to its last, the most votes any node relayed, and
// the leaders' outcome; the zero hash names no EB.
func TestEBFrames(t *testing.T) {
	const a, b = "aa000000000000000000000000000000000000000000000000000000000000aa", "bb000000000000000000000000000000000000000000000000000000000000bb"
	at := time.Now()
	nodes := []NodeObservation{
		{EBs: []apitypes.EBTimes{
			{Slot: 5, EbHash: a, Txs: 30, ClosureBytes: 9000, Votes: 2,
				StageMs: apitypes.StageMs{EBStages: apitypes.EBStages[int64]{Announced: ms(40), Body: ms(60), Closure: ms(90), Validated: ms(95), Voted: ms(100)}, Deadline: 600},
				Certify: &apitypes.CertifyAttempt{Outcome: apitypes.CertifyNoQuorum, At: at, AtMs: 1200}},
			{Slot: 9, EbHash: b, StageMs: apitypes.StageMs{EBStages: apitypes.EBStages[int64]{Announced: ms(30)}, Deadline: 600}},
			{Slot: 3, EbHash: strings.Repeat("0", 64)},
		}},
		{EBs: []apitypes.EBTimes{
			{Slot: 5, EbHash: a, Votes: 4,
				StageMs: apitypes.StageMs{EBStages: apitypes.EBStages[int64]{Announced: ms(20), Body: ms(50), Closure: ms(150)}, Deadline: 600},
				Certify: &apitypes.CertifyAttempt{Outcome: apitypes.CertifyCertified, At: at.Add(-time.Second), AtMs: 1100}},
		}},
		{Down: "down"},
	}
	got := ebFrames(nodes)
	if len(got) != 2 || got[0].Slot != 9 || got[1].Slot != 5 {
		t.Fatalf("EBs %+v; want slots 9 and 5, newest first", got)
	}
	eb := got[1]
	if eb.Hash != "aa000000" || eb.Txs != 30 || eb.Bytes != 9000 || eb.Nodes != 2 || eb.Votes != 4 || eb.DeadlineMs != 600 || eb.Outcome != apitypes.CertifyCertified {
		t.Errorf("EB at slot 5: %+v", eb)
	}
	want := []struct {
		nodes       int
		first, last int64
	}{{2, 20, 40}, {2, 50, 60}, {2, 90, 150}, {1, 95, 95}, {1, 100, 100}, {1, 1100, 1100}}
	for i, w := range want {
		s := eb.Stages[i]
		if s.Nodes != w.nodes || s.FirstMs == nil || *s.FirstMs != w.first || *s.LastMs != w.last {
			t.Errorf("%s: %d nodes, %v–%v; want %d, %d–%d", stages[i], s.Nodes, s.FirstMs, s.LastMs, w.nodes, w.first, w.last)
		}
	}
	if s := got[0].Stages[1]; s.Nodes != 0 || s.FirstMs != nil {
		t.Errorf("the EB at slot 9 has a body: %+v", s)
	}

	if n := len(ebFrames([]NodeObservation{{EBs: ebList(3 * maxEBs)}})); n != maxEBs {
		t.Errorf("%d EBs in a frame, want %d", n, maxEBs)
	}
}
