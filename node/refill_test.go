package node

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/leios/protocolset"
)

// refillClosures is how many certified closures the refill test's chain
// holds before the LeiosDB is deleted: dozens, more than one fetch window
// and one multi-block request take.
const refillClosures = 20

// A node whose LeiosDB was deleted while its chain kept the CertRBs that
// applied certified closures, below its immutable tip, fetches those
// closures again from its peers at restart — which no longer offer them —
// until every one is back, and serves every block of its chain again
// (/api/blocks). While no peer is up it says what is missing and since
// when (/status, /metrics) and answers /api/blocks for such a block 503;
// it keeps asking, so the peers that come up later refill it, though one
// of them leaves as soon as the refill is under way. Restarted with the CIP's protocols it takes
// every closure whole by MsgLeiosMultiBlockRequest; with the prototype's
// alone, point by point.
func TestDeletedLeiosDBIsRefilled(t *testing.T) {
	configs := testNet(t, 4, 100*time.Millisecond, func(g *consensus.Genesis) {
		// An RB a second, a quarter of them CertRBs: (1-f)^(MinCertGap-1).
		g.ActiveSlotsCoeff = "0.1"
		g.Leios.RBMaxBodyBytes = 700              // three of the test's txs
		g.Leios.LVote, g.Leios.MinCertGap = 8, 14 // as the ten-node test, for busy cores
		g.SystemStart = time.Now().Add(time.Second).UTC()
	})
	net := newTestNodes(t, configs)
	for i := range configs {
		net.start(i)
	}
	const subject = 3
	began := time.Now()
	certRBs := growCertifiedChain(t, net, subject, refillClosures)
	t.Logf("%d certified closures on chain after %v", certRBs, time.Since(began).Round(time.Second))

	// Deleted, and restarted with no peer up: nothing can come back.
	for i := range configs {
		net.stop(i)
	}
	must(t, os.RemoveAll(configs[subject].LeiosDBDir()))
	checks, err := CheckStores(configs[subject], quietLogger())
	must(t, err)
	if len(checks) != 3 || !checks[1].Absent || checks[2].Err == nil ||
		!strings.Contains(checks[2].Err.Error(), "certified closures the chain applied are missing from the LeiosDB") {
		t.Fatalf("db check of the node without its LeiosDB: %+v", checks)
	}
	configs[subject].LeiosProtocols = protocolset.CIP
	net.start(subject)
	waitHTTP(t, configs[subject].HTTPAddr)
	s, err := getStatus(configs[subject].HTTPAddr)
	must(t, err)
	if s.Leios.CertifiedClosuresMissing != int(certRBs) || s.Leios.MissingSince == nil {
		t.Fatalf("alone after the restart /status says %d certified closures missing since %v; the chain certifies %d",
			s.Leios.CertifiedClosuresMissing, s.Leios.MissingSince, certRBs)
	}
	assertBlocksAnswer(t, configs[subject].HTTPAddr, net.nodes[subject].chain.Tip().BlockNumber, http.StatusServiceUnavailable)
	assertMetric(t, configs[subject].HTTPAddr, "leiosnode_leios_certified_closures_missing", float64(certRBs))

	// The peers come back; one leaves as soon as the refill is under way
	// (on loopback the closures may all be back by then: the devnet's
	// refill fault stops a peer half-way through full-size closures).
	for i := range subject {
		net.start(i)
	}
	waitFor(t, "the refill to start", func() bool {
		return net.nodes[subject].leios.Refill().Missing < int(certRBs)
	})
	left := net.nodes[subject].leios.Refill().Missing
	net.stop(2)
	waitFor(t, "every certified closure to come back", func() bool {
		missing, err := net.nodes[subject].leios.MissingCertified()
		must(t, err)
		return len(missing) == 0 && net.nodes[subject].leios.Refill().Missing == 0
	})
	t.Logf("cip: %d certified closures refilled, %d of them after a peer left; %d EBs whole, %d bodies point by point",
		certRBs, left, net.nodes[subject].leios.FetchStats().BlocksWhole, net.nodes[subject].leios.FetchStats().BodiesByPoint)
	if st := net.nodes[subject].leios.FetchStats(); st.BlocksWhole < certRBs {
		t.Errorf("%d EBs fetched whole by multi-block requests for %d certified closures (%d bodies point by point)", st.BlocksWhole, certRBs, st.BodiesByPoint)
	}
	// What the chain certifies is counted from the chain: a restart keeps
	// it, where the process's own count starts again.
	if s, err := getStatus(configs[subject].HTTPAddr); err != nil || s.CertRBsOnChain < certRBs || s.Leios.CertifiedClosuresMissing != 0 || s.Leios.MissingSince != nil {
		t.Errorf("after the refill /status says %d certified EBs on chain (before it %d), %d closures missing since %v (%v)",
			s.CertRBsOnChain, certRBs, s.Leios.CertifiedClosuresMissing, s.Leios.MissingSince, err)
	}
	assertBlocksAnswer(t, configs[subject].HTTPAddr, net.nodes[subject].chain.Tip().BlockNumber, http.StatusOK)

	// Over the prototype's /leios/fetch/1 alone, point by point.
	net.stop(subject)
	must(t, os.RemoveAll(configs[subject].LeiosDBDir()))
	configs[subject].LeiosProtocols = protocolset.Prototype
	net.start(subject)
	waitFor(t, "every certified closure to come back over /leios/fetch/1", func() bool {
		missing, err := net.nodes[subject].leios.MissingCertified()
		must(t, err)
		return len(missing) == 0
	})
	if st := net.nodes[subject].leios.FetchStats(); st.BlocksWhole != 0 || st.BodiesByPoint < certRBs {
		t.Errorf("over /leios/fetch/1: %d EBs whole, %d bodies point by point, for %d certified closures", st.BlocksWhole, st.BodiesByPoint, certRBs)
	}
	assertBlocksAnswer(t, configs[subject].HTTPAddr, net.nodes[subject].chain.Tip().BlockNumber, http.StatusOK)
}

// testNodes runs the nodes of a test network, each stopped and started
// again at will; at the end of the test every one still running stops.
type testNodes struct {
	t       *testing.T
	configs []*config.Config
	nodes   []*Node
	stops   []func()
}

func newTestNodes(t *testing.T, configs []*config.Config) *testNodes {
	n := &testNodes{t: t, configs: configs, nodes: make([]*Node, len(configs)), stops: make([]func(), len(configs))}
	t.Cleanup(func() {
		for i := range configs {
			n.stop(i)
		}
	})
	return n
}

func (n *testNodes) start(i int) {
	node, err := New(n.configs[i], Options{Logger: quietLogger()})
	must(n.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- node.Run(ctx) }()
	n.nodes[i] = node
	n.stops[i] = func() {
		cancel()
		if err := <-done; err != nil {
			n.t.Errorf("node %d: %v", i, err)
		}
	}
}

func (n *testNodes) stop(i int) {
	if stop := n.stops[i]; stop != nil {
		n.stops[i] = nil
		stop()
	}
}

// growCertifiedChain submits txs beyond what RBs carry, a hundred at a
// time, until node subject's chain holds at least closures certified ones
// (whether an EB is certified depends on when the next RB comes), and
// waits for the last CertRB to be immutable: above the immutable tip a
// restart relays the announcements again, and peers offer the closures.
// It returns the number of CertRBs on node subject's chain.
func growCertifiedChain(t *testing.T, net *testNodes, subject int, closures uint64) uint64 {
	t.Helper()
	addr := net.configs[0].HTTPAddr
	waitHTTP(t, addr)
	txs := payments(t, 100*int(closures)*6)
	sent := 0
	waitFor(t, "certified closures on the chain", func() bool {
		s, err := getStatus(net.configs[subject].HTTPAddr)
		if err == nil && net.nodes[subject].chain.CertRBsOnChain() >= closures && s.TxsOnChain >= uint64(sent) {
			return true
		}
		if sent == len(txs) {
			t.Fatalf("%d txs sent, node %d's chain certifies %d closures", sent, subject, net.nodes[subject].chain.CertRBsOnChain())
		}
		// The next hundred spend the last one's output: sent once the node
		// they go to has every tx so far on its chain, so that no rollback
		// there can have taken that output away meanwhile.
		if s, err := getStatus(addr); err == nil && s.Mempool.Txs == 0 && s.TxsOnChain >= uint64(sent) {
			for _, tx := range txs[sent : sent+100] {
				submitAsWallet(t, addr, tx.Bytes())
				sent++
			}
		}
		return false
	})
	chain := net.nodes[subject].chain
	var lastCertRB uint64
	for i := uint64(1); i <= chain.Tip().BlockNumber; i++ {
		if h, err := chain.HeaderByNumber(i); err == nil && h.LeiosCertified {
			lastCertRB = i
		}
	}
	waitFor(t, "the last CertRB to be immutable", func() bool { return chain.ImmutableTip().BlockNumber > lastCertRB })
	return chain.CertRBsOnChain()
}

// waitFor polls done until it holds, failing the test only past a hang's
// ceiling.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	waittest.Until(t, what, done)
}

// assertBlocksAnswer asks /api/blocks for every block up to tip and wants
// status for the first page that holds a certified closure the LeiosDB
// misses (503) or for every page (200).
func assertBlocksAnswer(t *testing.T, addr string, tip uint64, status int) {
	t.Helper()
	for from := uint64(1); from <= tip; from += apitypes.MaxBlocksPerRequest {
		resp, err := http.Get("http://" + addr + "/api/blocks?from=" + strconv.FormatUint(from, 10))
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("/api/blocks?from=%d: %d %s; want %d", from, resp.StatusCode, body, status)
		}
		if status == http.StatusServiceUnavailable {
			var answer struct{ Error string }
			if json.Unmarshal(body, &answer) != nil || !strings.Contains(answer.Error, "certified closures missing since") || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("/api/blocks?from=%d: 503 %s, Retry-After %q", from, body, resp.Header.Get("Retry-After"))
			}
			return
		}
	}
}
