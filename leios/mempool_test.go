package leios

import (
	"context"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// An EB's txs that the mempool holds are stored from it — those admitted
// before the body arrives at once, those admitted after as they come —
// and the closure completes with nothing fetched.
func TestClosureFromMempool(t *testing.T) {
	f := newFunds(t)
	pool := mempoolOver(t, f)
	p := openPipeline(t, testOptions(t))
	if err := p.Attach(nil, pool); err != nil {
		t.Fatal(err)
	}
	ctx := runPipeline(t, p)

	raw := f.payments(t, 6, 1_000_000)
	admit := func(txs [][]byte) { admitRaw(t, pool, txs) }
	admit(raw[:3])
	eb := blocktest.EBOf(t, raw)
	pt := eb.Point(7)
	if err := p.insertAnnouncement(7, block.Hash{7}, eb.Announcement()); err != nil {
		t.Fatal(err)
	}
	if err := p.insertBody(pt, eb.Body, nil); err != nil {
		t.Fatal(err)
	}
	if got := p.fetcher.Missing(pt); len(got) != 3 {
		t.Fatalf("missing %v after the body: the admitted half should be stored", got)
	}
	admit(raw[3:])
	ctxWait, cancelWait := context.WithTimeout(ctx, waittest.Hang)
	defer cancelWait()
	if _, err := p.AwaitClosure(ctxWait, pt); err != nil {
		t.Fatalf("the closure did not complete from the mempool: %v", err)
	}
	// The count follows the store, whose commit may complete the closure
	// first.
	waittest.Until(t, "six txs counted from the mempool", func() bool { return p.Stats().TxsFromMempool >= 6 })
	if s := p.Stats(); s.FetchedBytes != 0 || s.TxsFromMempool != 6 {
		t.Fatalf("stats %+v", s)
	}
}

// mempoolOver is a mempool whose tip's ledger is f's funds.
func mempoolOver(t *testing.T, f funds) *mempool.Mempool {
	t.Helper()
	pool, err := mempool.New(mempool.Options{
		TipLedger: func() (ledger.UTxO, block.Tip, func(), error) { return f.utxo, block.Tip{}, func() {}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// admitRaw decodes and admits each of txs, and returns them decoded.
func admitRaw(t *testing.T, pool *mempool.Mempool, txs [][]byte) []*ledger.Tx {
	t.Helper()
	var out []*ledger.Tx
	for _, b := range txs {
		tx, err := ledger.DecodeTx(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := pool.Add(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
		out = append(out, tx)
	}
	return out
}
