package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/hostile"
	"github.com/leiosnode/leiosnode/network"
)

// The attack faults' sampling of the attacked node's /metrics: every
// attackSampleEvery, for attackBaseline before the attack (what its heap
// and RSS were without it) and attackAfter once it ended (what they came
// back to). Neither counts in the fault's length, the attack's own.
const (
	attackSampleEvery = 500 * time.Millisecond
	attackBaseline    = 5 * time.Second
	attackAfter       = 10 * time.Second
)

// The memory bounds docs/operations.md states for what attackers make a
// node hold, above what it holds anyway:
//   - the API's pools, for clients that ask and do not read or upload
//     slowly: 16 large answers of about 5 MiB at most each, 48 small ones
//     and 32 bodies of 16 KiB: under 100 MiB;
//   - the mini-protocol servers, for peers that ask and do not read:
//     ServeBytesHeld, plus each served stream's yamux window and each
//     block-fetch stream's block.
const (
	apiHeldBound = 100 << 20
	yamuxWindow  = 256 << 10
)

// AttackAccount is what an attack fault did and how the attacked node
// answered, from its /metrics: its heap and RSS before, at their peak
// during the attack and after it, against the bound, and the counters the
// attack moved.
type AttackAccount struct {
	// Did says what the attack does; Tally counts what it did (identities,
	// connections, streams, requests, …). Error is why it could not run.
	Did   string           `json:"did"`
	Tally map[string]int64 `json:"tally"`
	Error string           `json:"error,omitempty"`
	// Heap is go_memstats_heap_inuse_bytes and RSS
	// process_resident_memory_bytes: the most in the baseline before the
	// attack, the most during it, and the last sample after it.
	HeapBaselineBytes float64 `json:"heapBaselineBytes"`
	HeapPeakBytes     float64 `json:"heapPeakBytes"`
	HeapAfterBytes    float64 `json:"heapAfterBytes"`
	RSSBaselineBytes  float64 `json:"rssBaselineBytes"`
	RSSPeakBytes      float64 `json:"rssPeakBytes"`
	RSSAfterBytes     float64 `json:"rssAfterBytes"`
	// HeldBoundBytes is what the stated bound lets the attack make the
	// node hold (Bound says which bound); the heap may reach its baseline
	// plus that times 1 + GOGC/100, garbage the collector has not taken
	// yet included (HeapBoundBytes), and RSS its baseline plus as much
	// (RSSBoundBytes). WithinBounds: both peaks under theirs.
	Bound          string  `json:"bound"`
	HeldBoundBytes float64 `json:"heldBoundBytes"`
	HeapBoundBytes float64 `json:"heapBoundBytes"`
	RSSBoundBytes  float64 `json:"rssBoundBytes"`
	WithinBounds   bool    `json:"withinBounds"`
	// ServeHeldPeakBytes is leiosnode_network_serve_held_bytes at its
	// peak, of the 96 MiB bound.
	ServeHeldPeakBytes float64 `json:"serveHeldPeakBytes"`
	// Counters are the node's counters the attack moved (name{labels} →
	// increase from the last baseline sample to the last after it), an
	// increase under a half (of a counter of seconds) left out.
	Counters map[string]float64 `json:"counters"`
	// Answered: a counter of the node's refusals moved (violations, bans,
	// cuts, refusals, useless messages): the attack reached the node and
	// the node pushed back.
	Answered bool `json:"answered"`
	// LogBytes is how much the node's log grew during the attack and after.
	LogBytes int64 `json:"logBytes"`
	// BaselineMs and AfterMs are how long the node was sampled before the
	// attack and after it: outside the fault's length.
	BaselineMs int64 `json:"baselineMs"`
	AfterMs    int64 `json:"afterMs"`
	// Samples are the samples, by phase.
	Samples []MemorySample `json:"samples"`
}

// MemorySample is one read of the attacked node's /metrics.
type MemorySample struct {
	Seconds   float64 `json:"seconds"` // after the baseline started
	Phase     string  `json:"phase"`   // before, during, after
	HeapBytes float64 `json:"heapBytes"`
	RSSBytes  float64 `json:"rssBytes"`
	HeldBytes float64 `json:"heldBytes"` // leiosnode_network_serve_held_bytes
}

// answerCounters are the counters that say the node pushed back; the
// report lists every counter of these families the attack moved.
var answerCounters = []string{
	"leiosnode_network_violations_total",
	"leiosnode_network_bans_total",
	"leiosnode_network_refused_connections_total",
	"leiosnode_network_limit_refusals_total",
	"leiosnode_network_useless_total",
	"leiosnode_network_serve_wait_seconds_total",
	"leiosnode_api_limit_refusals_total",
	"leiosnode_api_answers_cut_total",
	"leiosnode_api_uploads_cut_total",
}

// nodeMetrics is one read of a node's /metrics: the figures an attack's
// account needs.
type nodeMetrics struct {
	heap, rss, held, gogc float64
	counters              map[string]float64
}

// readMetrics reads url's /metrics once.
func readMetrics(ctx context.Context, client *http.Client, url string) (*nodeMetrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("/metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("/metrics: %w", err)
	}
	m := &nodeMetrics{counters: map[string]float64{}, gogc: 100}
	value := func(s *dto.Metric) float64 {
		switch {
		case s.GetCounter() != nil:
			return s.GetCounter().GetValue()
		case s.GetGauge() != nil:
			return s.GetGauge().GetValue()
		}
		return s.GetUntyped().GetValue()
	}
	for name, f := range families {
		for _, s := range f.GetMetric() {
			switch {
			case name == "go_memstats_heap_inuse_bytes":
				m.heap = value(s)
			case name == "process_resident_memory_bytes":
				m.rss = value(s)
			case name == "go_gc_gogc_percent":
				m.gogc = value(s)
			case name == "leiosnode_network_serve_held_bytes":
				m.held = value(s)
			case slices.Contains(answerCounters, name):
				m.counters[seriesName(name, s)] = value(s)
			}
		}
	}
	return m, nil
}

// seriesName is name{label="value",…}, the labels in order.
func seriesName(name string, s *dto.Metric) string {
	var labels []string
	for _, l := range s.GetLabel() {
		labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	if len(labels) == 0 {
		return name
	}
	sort.Strings(labels)
	return name + "{" + strings.Join(labels, ",") + "}"
}

// attacking is an attack fault under way: the attack, and the sampler of
// the attacked node's /metrics.
type attacking struct {
	kind    Kind
	node    int
	cancel  context.CancelFunc
	done    sync.WaitGroup
	runErr  error // written by the attack's goroutine, read after done
	tally   hostile.Tally
	account AttackAccount
	logSize int64
	started time.Time // the baseline's start
	// baselineMs is the baseline's length; called is when callOff ended
	// the attack, after the sampling of the recovery it started.
	baselineMs int64
	called     time.Time
	after      sync.WaitGroup
	mu         sync.Mutex // guards samples, first, last
	samples    []MemorySample
	// first and last are the last baseline sample's metrics and the
	// latest one's.
	first, last *nodeMetrics
	stopSample  context.CancelFunc
}

// sample reads the node's /metrics once and keeps what it says.
func (a *attacking) sample(ctx context.Context, c *devnetChaos, phase string) {
	m, err := readMetrics(ctx, c.client, "http://"+c.d.Nodes[a.node].HTTPAddr)
	if err != nil {
		return // a node too busy to answer at once is sampled next time
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.samples = append(a.samples, MemorySample{Seconds: time.Since(a.started).Seconds(), Phase: phase, HeapBytes: m.heap, RSSBytes: m.rss, HeldBytes: m.held})
	if phase == "before" {
		a.first = m
	}
	a.last = m
}

// sampleUntil samples every attackSampleEvery until ctx ends or d passes.
func (a *attacking) sampleFor(ctx context.Context, c *devnetChaos, phase string, d time.Duration) {
	tick := time.NewTicker(attackSampleEvery)
	defer tick.Stop()
	end := time.Now().Add(d)
	for {
		a.sample(ctx, c, phase)
		if d > 0 && !time.Now().Add(attackSampleEvery).Before(end) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// attack starts an attack fault on node i: its baseline first, then the
// attack and the sampling during it, until callOff. It returns once the
// attack is under way: the fault's length runs from then.
func (c *devnetChaos) attack(kind Kind, i int) error {
	if c.attacking != nil {
		return errors.New("an attack is under way already")
	}
	a := &attacking{kind: kind, node: i, started: time.Now(), account: AttackAccount{Did: hostile.Describe(hostile.Attack(kind))}}
	a.logSize = fileSize(filepath.Join(c.d.Nodes[i].Dir, layout.NodeLogFileName))
	a.sampleFor(context.Background(), c, "before", attackBaseline)
	target, err := Target(context.Background(), c.d.Nodes[i], c.d.Genesis, c.apis[i], kind)
	if err != nil {
		return err
	}
	a.baselineMs = time.Since(a.started).Milliseconds()
	a.account.Bound, a.account.HeldBoundBytes = heldBound(kind, target)
	ctx, cancel := context.WithCancel(context.Background())
	sctx, stopSample := context.WithCancel(context.Background())
	a.cancel, a.stopSample = cancel, stopSample
	a.done.Go(func() { a.runErr = hostile.Run(ctx, hostile.Attack(kind), target, &a.tally) })
	a.done.Go(func() { a.sampleFor(sctx, c, "during", 0) })
	c.attacking = a
	return nil
}

// callOff ends the attack under way and starts sampling the node's
// recovery, which attackAccount waits for: the scheduler watches the nodes
// rejoin meanwhile.
func (c *devnetChaos) callOff() error {
	a := c.attacking
	if a == nil {
		return nil
	}
	a.cancel()
	a.stopSample()
	a.done.Wait()
	a.called = time.Now()
	a.after.Go(func() { a.sampleFor(context.Background(), c, "after", attackAfter) })
	// An attack that could not run (no closure to ask for yet) says so in
	// its account; the chaos mode goes on.
	return nil
}

// attackAccount waits for the sampling of the recovery of the attack
// called off last, and hands over its account.
func (c *devnetChaos) attackAccount() *AttackAccount {
	a := c.attacking
	c.attacking = nil
	if a == nil {
		return nil
	}
	a.after.Wait()
	a.account.Tally = a.tally.Counts()
	if a.runErr != nil {
		a.account.Error = a.runErr.Error()
	}
	a.account.LogBytes = fileSize(filepath.Join(c.d.Nodes[a.node].Dir, layout.NodeLogFileName)) - a.logSize
	a.account.BaselineMs, a.account.AfterMs = a.baselineMs, time.Since(a.called).Milliseconds()
	a.summarize()
	return &a.account
}

// summarize works out the peaks, the bounds and the counters moved.
func (a *attacking) summarize() {
	a.mu.Lock()
	defer a.mu.Unlock()
	acct := &a.account
	acct.Samples = a.samples
	for _, s := range a.samples {
		switch s.Phase {
		case "before":
			acct.HeapBaselineBytes = max(acct.HeapBaselineBytes, s.HeapBytes)
			acct.RSSBaselineBytes = max(acct.RSSBaselineBytes, s.RSSBytes)
		case "during":
			acct.HeapPeakBytes = max(acct.HeapPeakBytes, s.HeapBytes)
			acct.RSSPeakBytes = max(acct.RSSPeakBytes, s.RSSBytes)
		case "after":
			acct.HeapAfterBytes, acct.RSSAfterBytes = s.HeapBytes, s.RSSBytes
		}
		acct.ServeHeldPeakBytes = max(acct.ServeHeldPeakBytes, s.HeldBytes)
	}
	gogc := 100.0
	if a.last != nil && a.last.gogc > 0 {
		gogc = a.last.gogc
	}
	growth := acct.HeldBoundBytes * (1 + gogc/100)
	acct.HeapBoundBytes = acct.HeapBaselineBytes + growth
	acct.RSSBoundBytes = acct.RSSBaselineBytes + growth
	acct.WithinBounds = acct.HeapPeakBytes <= acct.HeapBoundBytes && acct.RSSPeakBytes <= acct.RSSBoundBytes
	acct.Counters = map[string]float64{}
	if a.first == nil || a.last == nil {
		return
	}
	acct.Counters = countersMoved(a.first, a.last)
	for name := range acct.Counters {
		if !strings.HasPrefix(name, "leiosnode_network_serve_wait_seconds_total") {
			acct.Answered = true
		}
	}
}

// countersMoved are the counters of answerCounters that rose from first
// to last, by how much; an increase under a half, which a report would
// spell +0 (a counter of seconds), is left out.
func countersMoved(first, last *nodeMetrics) map[string]float64 {
	moved := map[string]float64{}
	for name, v := range last.counters {
		if d := v - first.counters[name]; d >= 0.5 {
			moved[name] = d
		}
	}
	return moved
}

// heldBound is the bound docs/operations.md states for what the attack
// makes the node hold, and its name: the API's pools for the HTTP client;
// for the peer, what the servers may hold (ServeBytesHeld) and the yamux
// windows of the streams it opens, with a block per block-fetch stream.
func heldBound(kind Kind, t hostile.Target) (string, float64) {
	switch kind {
	case HTTPUnread, HTTPSlowUpload:
		return "the API's pools: under 100 MiB", apiHeldBound
	}
	fetchStreams, blockStreams := hostile.Streams(hostile.Attack(kind))
	held := float64(network.DefaultServeBytesHeld) + float64(fetchStreams+blockStreams)*yamuxWindow +
		float64(blockStreams)*float64(t.MaxBlockBytes)
	return fmt.Sprintf("ServeBytesHeld 96 MiB + %d streams × 256 KiB + %d blocks", fetchStreams+blockStreams, blockStreams), held
}

// Target is what the attack of kind needs to know of node n of a network
// of genesis g, whose API is api: its addresses and, for the unread fetch
// attack, its largest certified closures and its chain's ends.
func Target(ctx context.Context, n layout.Node, g *consensus.Genesis, api apiclient.Client, kind Kind) (hostile.Target, error) {
	addr, err := peer.AddrInfoFromString(n.DialAddr + "/p2p/" + n.PeerID.String())
	if err != nil {
		return hostile.Target{}, fmt.Errorf("%s's libp2p address: %w", n.Name, err)
	}
	t := hostile.Target{
		Peer: *addr, HTTPAddr: n.HTTPAddr, Limits: g.Leios.EBLimits(),
		MaxBlockBytes: int(g.Leios.RBMaxBodyBytes) + blockHeaderBytes,
		Slot: func() uint64 {
			return uint64(max(0, time.Since(g.SystemStart)) / g.SlotLength())
		},
	}
	if kind != FetchUnread {
		return t, nil
	}
	for from := uint64(1); ; {
		blocks, err := api.Blocks(ctx, from, 1000)
		if err != nil {
			return t, fmt.Errorf("%s's chain: %w", n.Name, err)
		}
		if len(blocks) == 0 {
			break
		}
		for _, b := range blocks {
			hash, err := block.ParseHash(b.Hash)
			if err != nil {
				return t, fmt.Errorf("%s's block #%d: %w", n.Name, b.Number, err)
			}
			if t.First.Hash == (block.Hash{}) {
				t.First = block.Point{Slot: b.Slot, Hash: hash}
			}
			t.Tip = block.Point{Slot: b.Slot, Hash: hash}
			if b.Certifies != nil {
				eb, err := block.ParseHash(b.Certifies.EbHash)
				if err != nil {
					return t, fmt.Errorf("%s's block #%d: %w", n.Name, b.Number, err)
				}
				t.Closures = append(t.Closures, hostile.Closure{Point: block.Point{Slot: b.Certifies.Slot, Hash: eb}, Txs: len(b.Closure)})
			}
		}
		from = blocks[len(blocks)-1].Number + 1
	}
	slices.SortStableFunc(t.Closures, func(a, b hostile.Closure) int { return b.Txs - a.Txs })
	return t, nil
}

// blockHeaderBytes is more than an RB's header takes beside its body.
const blockHeaderBytes = 1 << 10

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// Line is the account in one line: what the node's heap and RSS did
// against the bound, the counters that moved, and what the attack did.
func (a *AttackAccount) Line() string {
	if a == nil {
		return "no account"
	}
	within := "within"
	if !a.WithinBounds {
		within = "OVER"
	}
	line := fmt.Sprintf("heap peak %s (before %s, after %s; bound %s), RSS peak %s (before %s, after %s; bound %s): %s the bound (%s)",
		mib(a.HeapPeakBytes), mib(a.HeapBaselineBytes), mib(a.HeapAfterBytes), mib(a.HeapBoundBytes),
		mib(a.RSSPeakBytes), mib(a.RSSBaselineBytes), mib(a.RSSAfterBytes), mib(a.RSSBoundBytes), within, a.Bound)
	if a.ServeHeldPeakBytes > 0 {
		line += fmt.Sprintf("; servers held %s at most", mib(a.ServeHeldPeakBytes))
	}
	names := make([]string, 0, len(a.Counters))
	for name := range a.Counters {
		names = append(names, name)
	}
	slices.Sort(names)
	moved := make([]string, len(names))
	for i, name := range names {
		moved[i] = fmt.Sprintf("%s +%.0f", strings.TrimPrefix(name, "leiosnode_"), a.Counters[name])
	}
	if len(moved) == 0 {
		line += "; no counter of the node's refusals moved"
	} else {
		line += "; moved: " + strings.Join(moved, ", ")
	}
	line += fmt.Sprintf("; log +%d kB; sampled %.0f s before and %.0f s after", a.LogBytes/1000, float64(a.BaselineMs)/1000, float64(a.AfterMs)/1000)
	if a.Error != "" {
		line += "; the attack could not run: " + a.Error
	}
	var tally []string
	for name, n := range a.Tally {
		tally = append(tally, fmt.Sprintf("%s %d", name, n))
	}
	slices.Sort(tally)
	return line + "; the attacker: " + strings.Join(tally, ", ")
}

// mib spells bytes in MiB.
func mib(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }
