package txsubmission_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// TestConvergenceProperty: whatever the window and request limits, and
// however adds on both sides interleave with the exchange, both mempools
// end up holding every tx, each tx is served exactly once (by the side it
// was added at, never echoed back), and neither side sees a violation.
func TestConvergenceProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		opts := txsubmission.Options{
			MaxUnackedTxIds:  rapid.IntRange(1, 8).Draw(rt, "window"),
			MaxTxsPerRequest: rapid.IntRange(1, 8).Draw(rt, "batch"),
			MaxRequestBytes:  rapid.IntRange(1, 2000).Draw(rt, "requestBytes"),
		}
		keys := rapid.IntRange(1, 4).Draw(rt, "keys")
		// Key k's chain of txs is added at A if k is even, at B if odd.
		adds := rapid.SliceOfN(rapid.IntRange(0, keys-1), 1, 30).Draw(rt, "adds")
		before := rapid.IntRange(0, len(adds)).Draw(rt, "addedBeforeConnecting")

		w := newWallet(keys)
		a, b := newMempool(w.genesis()), newMempool(w.genesis())
		side := func(k int) *memMempool { return [2]*memMempool{a, b}[k%2] }
		var all []*ledger.Tx
		add := func(k int) {
			tx := w.txs(t, k, 1)[0]
			side(k).mustAdd(t, tx)
			all = append(all, tx)
		}
		for _, k := range adds[:before] {
			add(k)
		}
		ab, stopAB := run(a, b, opts)
		defer stopAB()
		ba, stopBA := run(b, a, opts)
		defer stopBA()
		for _, k := range adds[before:] {
			add(k)
		}

		deadline := time.Now().Add(10 * time.Second)
		for !a.holdsAll(all) || !b.holdsAll(all) {
			if time.Now().After(deadline) {
				rt.Fatalf("A holds %d, B %d of %d txs", a.len(), b.len(), len(all))
			}
			time.Sleep(time.Millisecond)
		}
		for _, tx := range all {
			if n, m := a.served(tx.Hash()), b.served(tx.Hash()); n+m != 1 {
				rt.Fatalf("tx %x served %d times by A and %d by B, want once", tx.Hash(), n, m)
			}
		}
		for _, l := range []*link{ab, ba} {
			select {
			case err := <-l.clientViolation:
				rt.Fatalf("client reported %v", err)
			case err := <-l.serverViolation:
				rt.Fatalf("server reported %v", err)
			default:
			}
		}
	})
}
