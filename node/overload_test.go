package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/waittest"
)

// Three producers offered txs as fast as one wallet can post them, far
// beyond what blocks of three txs and EBs of ten carry, into mempools
// bounded at twice that: the edge refuses the excess with 503, Retry-After
// and the reason (a wallet waits that long and sends the same tx again), the
// mempool never holds more than its bound, EBs keep being certified while
// the mempools are full, and every tx the edge admitted reaches every
// node's chain. The test asserts on what the nodes say happened, never on
// how fast the machine did it.
func TestOverloadIsRefusedAtTheEdge(t *testing.T) {
	const offered = 200 // a chain: each tx spends the last one's output
	configs := testNet(t, 3, 100*time.Millisecond, func(g *consensus.Genesis) {
		// At f 0.1 and a gap of 14 slots the next RB comes late enough
		// for a certificate after a quarter of EBs (0.9^13): over the
		// twenty-odd RBs of the refusing span one is all but sure
		// (0.75^25 < 0.1 % to miss). At f 0.2 it was one in eighteen, and
		// a span without one a run in ten.
		g.ActiveSlotsCoeff = "0.1"
		g.Leios.RBMaxBodyBytes = 700                            // three of the test's txs
		g.Leios.EBMaxTxs, g.Leios.EBMaxClosureBytes = 10, 2_300 // an EB certifies at most ten
		g.ProtocolParams.MaxTxSize = 1_024                      // a tx must fit an EB
		g.Leios.LVote, g.Leios.MinCertGap = 8, 14               // as the ten-node test, for busy cores
		g.SystemStart = time.Now().Add(time.Second).UTC()
	})
	runNodes(t, configs)
	addr := configs[0].HTTPAddr
	waitHTTP(t, addr)

	// Watch node 0 while the wallet posts: its mempool's bytes against its
	// bound, and the certificates applied while it was refusing.
	var (
		overBound      []apitypes.MempoolStatus
		certifiedFirst uint64 // CertRBs applied when the first refusal came
		certifiedFull  uint64 // and the most applied while still refusing
	)
	refusing := make(chan struct{})
	posting := make(chan struct{})
	watch := errgroup.Group{}
	watch.Go(func() error {
		var sawRefusal bool
		for {
			s, err := getStatus(addr)
			if err == nil {
				if s.Mempool.Bytes > s.Mempool.CapacityBytes {
					overBound = append(overBound, s.Mempool)
				}
				select {
				case <-refusing:
					if !sawRefusal {
						sawRefusal, certifiedFirst = true, s.Leios.EBsCertified
					}
					if s.Admission != nil && !s.Admission.Admitting {
						certifiedFull = s.Leios.EBsCertified
					}
				default:
				}
			}
			select {
			case <-posting:
				return nil
			case <-time.After(50 * time.Millisecond):
			}
		}
	})

	// A 503 is the edge's, naming its reason, or the mempool's own past
	// the edge (full, or no turn to add): only the first kind counts for
	// the edge.
	refusals := map[string]uint64{} // the edge's, by reason
	pastTheEdge := 0
	for _, tx := range payments(t, offered) {
		for _, body := range submitAsWallet(t, addr, tx.Bytes()) {
			reason, ok := edgeReason(body)
			if !ok {
				pastTheEdge++
				continue
			}
			if len(refusals) == 0 {
				close(refusing)
			}
			refusals[reason]++
		}
	}
	close(posting)
	must(t, watch.Wait())

	if len(refusals) == 0 {
		t.Fatalf("the edge refused nothing (the mempool past it answered 503 %d times): the test offered less than the nodes carry, or the edge let through what it should refuse", pastTheEdge)
	}
	// The wallet is node 0's one submitter: /status counts exactly the
	// refusals it was given, reason by reason.
	s, err := getStatus(addr)
	must(t, err)
	if s.Admission == nil {
		t.Fatalf("refused %v, but /status has no admission", refusals)
	}
	for reason, n := range s.Admission.Refused {
		if n != refusals[reason] {
			t.Errorf("/status counts %d refusals for %s, the wallet was given %d (all: /status %v, wallet %v)", n, reason, refusals[reason], s.Admission.Refused, refusals)
		}
	}
	for reason := range refusals {
		if _, ok := s.Admission.Refused[reason]; !ok {
			t.Errorf("the wallet was refused for %s, a reason /status does not count: %v", reason, s.Admission.Refused)
		}
	}
	if len(overBound) > 0 {
		t.Fatalf("the mempool held more than its bound: %+v", overBound)
	}
	if certifiedFull <= certifiedFirst {
		t.Fatalf("no EB certified while the edge refused (CertRBs %d at the first refusal, %d at the last poll refusing); refusals %v",
			certifiedFirst, certifiedFull, refusals)
	}
	// Every admitted tx reaches every chain: the wallet's 200 and the
	// genesis funds are all that move.
	for _, cfg := range configs {
		waittest.Until(t, fmt.Sprintf("the %d admitted txs on the chain of %s", offered, cfg.HTTPAddr), func() bool {
			s, err := getStatus(cfg.HTTPAddr)
			return err == nil && s.TxsOnChain >= offered
		})
	}
	t.Logf("refusals at the edge %v, 503s past it %d; CertRBs %d → %d while refusing", refusals, pastTheEdge, certifiedFirst, certifiedFull)
}

// edgeReason reads the reason of a refusal by the node's edge from a 503's
// body, {"error": "refused (REASON): …"}; ok is false for any other 503.
func edgeReason(body string) (reason string, ok bool) {
	var answer struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(body), &answer) != nil {
		return "", false
	}
	m := regexp.MustCompile(`^refused \(([a-z-]+)\): `).FindStringSubmatch(answer.Error)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// submitAsWallet posts tx to the node's submit API until it is admitted,
// as a wallet does: after a 503 it waits the Retry-After the node named and
// sends it again. It returns the refusals' bodies; any other answer fails
// the test.
func submitAsWallet(t *testing.T, addr string, tx []byte) (refusals []string) {
	t.Helper()
	for {
		resp, err := http.Post("http://"+addr+"/api/submit/tx", "application/cbor", bytes.NewReader(tx))
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusAccepted:
			return refusals
		case resp.StatusCode != http.StatusServiceUnavailable:
			t.Fatalf("submit: %d %s", resp.StatusCode, body)
		}
		after, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil || after < 1 {
			t.Fatalf("503 %s with Retry-After %q", body, resp.Header.Get("Retry-After"))
		}
		refusals = append(refusals, string(body))
		time.Sleep(time.Duration(after) * time.Second) // as a wallet does
	}
}
