package mempool

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/internal/metricstest"
	"github.com/leiosnode/leiosnode/ledger"
)

// The mempool registers its metrics on the registry it is handed: the txs
// and bytes held follow adds and syncs, and each sync counts on its path.
func TestMetricsFollowAddsAndSyncs(t *testing.T) {
	w := newWallet(1)
	g := w.genesis()
	in := ledger.GenesisTxIn(w.addrs[0])
	txs := w.chain(t, in, g[in], 2)
	for _, c := range []struct {
		name   string
		ledger *testLedger
		path   string // the counter the sync moves
	}{
		{"extension", newExtendingLedger(g), "leiosnode_mempool_syncs_extension_total"},
		{"full", newTestLedger(g), "leiosnode_mempool_syncs_full_total"},
	} {
		t.Run(c.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := newTestMempool(t, c.ledger, Options{Registerer: reg})
			want := func(values map[string]float64) {
				t.Helper()
				got := metricstest.Values(t, reg)
				for name, v := range values {
					if g, ok := got[name]; !ok || g != v {
						t.Errorf("%s = %v (present %v), want %v", name, g, ok, v)
					}
				}
			}
			want(map[string]float64{"leiosnode_mempool_txs": 0, "leiosnode_mempool_bytes": 0,
				"leiosnode_mempool_syncs_extension_total": 0, "leiosnode_mempool_syncs_full_total": 0})
			mustAdd(t, m, txs...)
			want(map[string]float64{"leiosnode_mempool_txs": 2, "leiosnode_mempool_bytes": float64(m.Snapshot().Bytes())})
			if m.Snapshot().Bytes() == 0 {
				t.Fatal("two txs held in no bytes")
			}
			_, _, u := revalidate(g, 0, txs[:1])
			c.ledger.advance(u)
			mustSync(t, m)
			want(map[string]float64{"leiosnode_mempool_txs": 1, c.path: 1})
		})
	}
}
