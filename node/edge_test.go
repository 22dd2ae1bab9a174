package node

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/admission"
	"github.com/leiosnode/leiosnode/consensus"
)

// templateTiming reads the protocol time of a genesis template in configs/.
func templateTiming(t *testing.T, file string) consensus.Timing {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var g consensus.Genesis
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return g.Timing()
}

// The edge at the CIP's timing (configs/testnet.json: 1 s slots, f 0.05,
// an RB every 20 s) takes in txs when the node carries what the chain can
// take: its oldest tx waits for the next RB and then for an EB that is
// certified (the model's p50 and p95: 47 and 107 s), and the tip lags the
// clock by an ordinary gap between blocks. Bounds tuned to 100 ms slots
// (oldest tx 10 s, lag 100 slots) refused all of these. At the devnet's
// timing the same waits do say the backlog grows.
func TestEdgeAtTestnetTimingAdmitsANodeAtCapacity(t *testing.T) {
	testnet := edgeOptions(templateTiming(t, "../configs/testnet.json"))
	devnet := edgeOptions(templateTiming(t, "../configs/devnet.json"))
	now := time.Unix(1_800_000_000, 0)
	atCapacity := func(oldestWait time.Duration, lagSlots uint64) admission.Figures {
		return admission.Figures{
			Now: now, ClockSlot: 100_000, TipSlot: 100_000 - lagSlots,
			OldestAdmitted: now.Add(-oldestWait),
			// 33,000 txs of 200 B held, of a 48 MB mempool: more than the
			// next two EBs take, within the backlog bound, so the oldest's
			// wait speaks for a backlog.
			MempoolTxs: 33_000, MempoolBytes: 33_000 * 200, MempoolCapacity: 4 * (90_112 + 12_000_000),
		}
	}
	for _, tc := range []struct {
		name    string
		figures admission.Figures
	}{
		{"a tx that waits for the next RB", atCapacity(20*time.Second, 20)},
		{"a wait at the model's p50", atCapacity(47*time.Second, 20)},
		{"a wait at the model's p95", atCapacity(107*time.Second, 20)},
		{"a wait at the inclusion bound, 115 s", atCapacity(115*time.Second, 20)},
		{"a tip 100 slots behind: five RB intervals without a block", atCapacity(20*time.Second, 100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := admission.Decide(testnet, tc.figures, admission.Local); !d.Admits() {
				t.Errorf("refused at testnet timing: %s (%s)", d.Reason, d.Detail)
			}
			if d := admission.Decide(devnet, tc.figures, admission.Local); d.Admits() {
				t.Errorf("admitted at devnet timing")
			}
		})
	}
	// A backlog the chain does not take is refused at any timing.
	if d := admission.Decide(testnet, atCapacity(160*time.Second, 20), admission.Local); d.Reason != admission.QueueDelay {
		t.Errorf("a 160 s wait at testnet timing: %s, want %s", d.Reason, admission.QueueDelay)
	}
	if d := admission.Decide(testnet, atCapacity(20*time.Second, 200), admission.Local); d.Reason != admission.Syncing {
		t.Errorf("a tip 200 slots behind at testnet timing: %s, want %s", d.Reason, admission.Syncing)
	}
	// A surge is refused at once, before its first txs have waited: more
	// than three full EBs held, or of large txs more than three blocks'
	// bytes — by the edge, below the mempool's high water, which would
	// refuse peers' txs too.
	surge := atCapacity(5*time.Second, 20)
	surge.MempoolTxs, surge.MempoolBytes = 45_000, 45_000*200
	if d := admission.Decide(testnet, surge, admission.Local); d.Reason != admission.QueueDelay {
		t.Errorf("45,000 txs held at testnet timing: %s, want %s", d.Reason, admission.QueueDelay)
	}
	surge.MempoolTxs, surge.MempoolBytes = 10_000, 10_000*3_672
	if d := admission.Decide(testnet, surge, admission.Local); d.Reason != admission.QueueDelay {
		t.Errorf("10,000 large txs held (36.7 MB) at testnet timing: %s, want %s", d.Reason, admission.QueueDelay)
	}
	if d := admission.Decide(testnet, surge, admission.Peers); !d.Admits() {
		t.Errorf("peers' txs refused with 36.7 MB held: %s (%s)", d.Reason, d.Detail)
	}
	// After a run of RBs too early to certify, or long gaps, the oldest
	// tx has waited past the bound while the chain took all but what its
	// next two EBs take — the one awaiting its certificate and the one the
	// certifying RB announces: a tx admitted now rides in those with the
	// oldest, so the wait refuses nothing, at any timing — in txs or, for
	// large txs, in bytes — and the EB after the certificate goes out
	// full. The edge that refused beyond one EB drained the mempool to
	// EBs of 3,764 and 4,480 txs after a slow stretch of chain.
	for _, held := range []struct {
		name       string
		txs, bytes int
	}{
		{"3,000 payments", 3_000, 3_000 * 200},
		{"an EB awaiting its certificate and 3,000 payments more", 16_443, 16_443 * 200},
		{"3,000 large txs (11 MB)", 3_000, 3_000 * 3_672},
		{"6,000 large txs (22 MB)", 6_000, 6_000 * 3_672},
	} {
		f := atCapacity(200*time.Second, 20)
		f.MempoolTxs, f.MempoolBytes = held.txs, held.bytes
		for name, o := range map[string]admission.Options{"testnet": testnet, "devnet": devnet} {
			if d := admission.Decide(o, f, admission.Local); !d.Admits() {
				t.Errorf("%s: %s held, the oldest 200 s old: %s (%s)", name, held.name, d.Reason, d.Detail)
			}
		}
	}
	large := atCapacity(200*time.Second, 20)
	large.MempoolTxs, large.MempoolBytes = 6_600, 6_600*3_672
	if d := admission.Decide(testnet, large, admission.Local); d.Reason != admission.QueueDelay {
		t.Errorf("6,600 large txs held (24.2 MB, past two EBs' closures), the oldest 200 s old: %s, want %s", d.Reason, admission.QueueDelay)
	}
	// A refused submitter is asked back when the next RB may have changed
	// the answer.
	if testnet.RetryAfter != 20*time.Second || devnet.RetryAfter != time.Second {
		t.Errorf("retry after %v (testnet), %v (devnet)", testnet.RetryAfter, devnet.RetryAfter)
	}
}
