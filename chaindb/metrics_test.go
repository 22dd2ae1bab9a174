package chaindb

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/metricstest"
)

// The database registers its metrics on the registry it is handed, and they
// follow the chain as blocks are added; CheckOpen registers nothing.
func TestMetricsFollowTheChain(t *testing.T) {
	const k = 2
	fs := vfs.NewMem()
	opts := testOptions(k, testGenesis(1), fs)
	opts.Registerer = prometheus.NewRegistry() // CheckOpen must leave it alone
	if err := CheckOpen("db", opts); err != nil {
		t.Fatal(err)
	}
	if families, err := opts.Registerer.(*prometheus.Registry).Gather(); err != nil || len(families) != 0 {
		t.Fatalf("CheckOpen registered %d families (%v)", len(families), err)
	}
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	db := mustOpen(t, "db", opts)
	defer db.Close()
	want := func(values map[string]float64) {
		t.Helper()
		got := metricstest.Values(t, reg)
		for name, v := range values {
			if g, ok := got[name]; !ok || g != v {
				t.Errorf("%s = %v (present %v), want %v", name, g, ok, v)
			}
		}
	}
	want(map[string]float64{
		"leiosnode_tip_block_number": 0, "leiosnode_tip_slot": 0, "leiosnode_immutable_tip_block_number": 0,
		"leiosnode_chain_txs": 0, "leiosnode_chain_certified_ebs": 0,
		`leiosnode_store_write_stalls_total{store="chaindb"}`: 0, `leiosnode_store_write_stall_seconds_total{store="chaindb"}`: 0,
	})
	f := newForger()
	f.certifies = func(number uint64) bool { return number == 2 }
	blocks := []*block.Block{f.next(nil, 1, testTx{Outs: []testOut{{Addr: []byte("a"), Coin: 1}}})}
	blocks = append(blocks, f.chain(blocks[0].Header, 4)...)
	mustAdd(t, db, blocks...)
	tip := blocks[len(blocks)-1].Header
	want(map[string]float64{
		"leiosnode_tip_block_number": float64(tip.BlockNumber), "leiosnode_tip_slot": float64(tip.Slot),
		"leiosnode_immutable_tip_block_number": float64(tip.BlockNumber - k),
		"leiosnode_chain_txs":                  1, "leiosnode_chain_certified_ebs": 1,
	})
}
