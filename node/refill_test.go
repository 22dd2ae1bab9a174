package node

import (
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/api"
	"github.com/leiosnode/leiosnode/consensus"
)

// A node whose LeiosDB was deleted while its chain kept the CertRBs that
// applied certified closures, below its immutable tip, fetches those
// closures again from its peers at restart — which no longer offer them —
// and serves every block of its chain again (/api/blocks). Restarted with
// the CIP's protocols it takes every closure whole by MsgLeiosMultiBlockRequest;
// with the prototype's alone, point by point.
func TestDeletedLeiosDBIsRefilled(t *testing.T) {
	for _, protocols := range []string{"cip", "prototype"} {
		t.Run(protocols, func(t *testing.T) { testRefill(t, protocols) })
	}
}

func testRefill(t *testing.T, restartWith string) {
	configs := testNet(t, 3, 100*time.Millisecond, func(g *consensus.Genesis) {
		g.ActiveSlotsCoeff = "0.2"
		g.Leios.RBMaxBodyBytes = 700              // three of the test's txs
		g.Leios.LVote, g.Leios.MinCertGap = 8, 14 // as the ten-node test, for busy cores
		g.SystemStart = time.Now().Add(time.Second).UTC()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	nodes := make([]*Node, len(configs))
	start := func(i int, ctx context.Context) <-chan error {
		n, err := New(configs[i], Options{Logger: quietLogger()})
		must(t, err)
		nodes[i] = n
		done := make(chan error, 1)
		go func() { done <- n.Run(ctx) }()
		return done
	}
	for i := range 2 {
		g.Go(func() error { return <-start(i, gctx) })
	}
	ctx2, stop2 := context.WithCancel(gctx)
	ran2 := start(2, ctx2)
	defer func() {
		cancel()
		must(t, g.Wait())
	}()

	// Txs beyond what RBs carry, a hundred at a time, until node 2's chain
	// holds a certified closure (whether an EB is certified depends on
	// when the next RB comes).
	waitHTTP(t, configs[0].HTTPAddr)
	txs := payments(t, 3000)
	deadline := time.Now().Add(2 * time.Minute)
	for sent := 0; ; {
		s, err := getStatus(configs[2].HTTPAddr)
		if err == nil && s.Leios.EBsCertified >= 1 && s.TxsOnChain >= uint64(sent) {
			break
		}
		if time.Now().After(deadline) || sent == len(txs) {
			t.Fatalf("node 2 applied %d certified closures, %d of %d txs (%v)", s.Leios.EBsCertified, s.TxsOnChain, sent, err)
		}
		if err == nil && s.Mempool.Txs == 0 {
			for _, tx := range txs[sent : sent+100] {
				submitAsWallet(t, configs[0].HTTPAddr, tx.Bytes())
				sent++
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Until the CertRBs are below the immutable tip: above it the restart
	// relays their announcements again, and peers offer the closures.
	lastCertRB := func() (n uint64) {
		for i := uint64(1); i <= nodes[2].chain.Tip().BlockNumber; i++ {
			if h, err := nodes[2].chain.HeaderByNumber(i); err == nil && h.LeiosCertified {
				n = i
			}
		}
		return n
	}
	for certRB := lastCertRB(); nodes[2].chain.ImmutableTip().BlockNumber <= certRB; {
		if time.Now().After(deadline) {
			t.Fatalf("the CertRB #%d never became immutable (immutable tip %s)", certRB, nodes[2].chain.ImmutableTip())
		}
		time.Sleep(100 * time.Millisecond)
	}
	certRBs := nodes[2].chain.CertRBsOnChain()
	stop2()
	must(t, <-ran2)
	must(t, os.RemoveAll(leiosDir(configs[2])))
	// db check says what is missing, and what to do, before the restart.
	checks, err := CheckStores(configs[2], quietLogger())
	must(t, err)
	if len(checks) != 3 || !checks[1].Absent || checks[2].Err == nil ||
		!strings.Contains(checks[2].Err.Error(), "certified closures the chain applied are missing from the LeiosDB") {
		t.Fatalf("db check of the node without its LeiosDB: %+v", checks)
	}

	configs[2].LeiosProtocols = restartWith
	ran2 = start(2, gctx)
	defer func() { cancel(); <-ran2 }()
	deadline = time.Now().Add(time.Minute)
	for {
		missing, err := nodes[2].leios.MissingCertified()
		must(t, err)
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d certified closures still missing after the restart, the first %v", len(missing), missing[0])
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The counters say which path the closures took.
	switch st := nodes[2].leios.FetchStats(); restartWith {
	case "cip":
		if st.BlocksWhole < certRBs {
			t.Errorf("%d EBs fetched whole by multi-block requests for %d certified closures (%d bodies point by point)", st.BlocksWhole, certRBs, st.BodiesByPoint)
		}
	case "prototype":
		if st.BlocksWhole != 0 || st.BodiesByPoint < certRBs {
			t.Errorf("over /leios/fetch/1: %d EBs whole, %d bodies point by point, for %d certified closures", st.BlocksWhole, st.BodiesByPoint, certRBs)
		}
	}
	t.Logf("%s: %d certified closures refilled; %d EBs whole, %d bodies point by point", restartWith, certRBs, nodes[2].leios.FetchStats().BlocksWhole, nodes[2].leios.FetchStats().BodiesByPoint)
	// What the chain certifies is counted from the chain: a restart keeps
	// it, where the process's own count starts again.
	if s, err := getStatus(configs[2].HTTPAddr); err != nil || s.CertRBsOnChain < certRBs || certRBs == 0 {
		t.Errorf("after the restart /status says %d certified EBs on chain, before it %d (%v)", s.CertRBsOnChain, certRBs, err)
	}
	// Every block of its chain is served, the CertRBs with their closures.
	tip := nodes[2].chain.Tip().BlockNumber
	for from := uint64(1); from <= tip; from += api.MaxBlocksPerRequest {
		resp, err := http.Get("http://" + configs[2].HTTPAddr + "/api/blocks?from=" + strconv.FormatUint(from, 10))
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/api/blocks?from=%d after the refill: %d %s", from, resp.StatusCode, body)
		}
	}
}
