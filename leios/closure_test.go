package leios

import (
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/ledger"
)

// A closure to apply takes the txs the mempool holds from it, decoded and
// verified, and reads and decodes the rest, which count as verified only
// once a closure check has verified them (MarkVerified): each tx's
// witnesses are verified once per node.
func TestClosureTxsVerifiedOnce(t *testing.T) {
	f := newFunds(t)
	pool := mempoolOver(t, f)
	p := openPipeline(t, testOptions(t))
	if err := p.Attach(nil, pool); err != nil {
		t.Fatal(err)
	}

	raw := f.payments(t, 6, 1_000_000)
	admitted := map[block.Hash]*ledger.Tx{}
	for _, tx := range admitRaw(t, pool, raw[:3]) {
		admitted[tx.Hash()] = tx
	}
	eb := blocktest.EBOf(t, raw)
	pt := eb.Point(7)
	if err := p.insertAnnouncement(7, block.Hash{7}, eb.Announcement()); err != nil {
		t.Fatal(err)
	}
	if _, held, err := p.ClosureTxs(pt); err != nil || held {
		t.Fatalf("a closure without a body: held %v, %v", held, err)
	}
	if err := p.insertBody(pt, eb.Body, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.insertTxs(pt, block.HashTxs(raw[3:]), false); err != nil {
		t.Fatal(err)
	}

	check := func(wantVerified func(i int) bool) []block.Hash {
		t.Helper()
		txs, held, err := p.ClosureTxs(pt)
		if err != nil || !held || len(txs) != len(raw) {
			t.Fatalf("closure: %d txs, held %v, %v", len(txs), held, err)
		}
		var unverified []block.Hash
		for i, tx := range txs {
			if tx.Tx.Hash() != block.HashBytes(raw[i]) {
				t.Fatalf("tx %d is not the EB's", i)
			}
			if tx.Verified != wantVerified(i) {
				t.Fatalf("tx %d verified %v", i, tx.Verified)
			}
			if a := admitted[tx.Tx.Hash()]; a != nil && a != tx.Tx {
				t.Fatalf("tx %d decoded again: the mempool holds it", i)
			}
			if !tx.Verified {
				unverified = append(unverified, tx.Tx.Hash())
			}
		}
		return unverified
	}
	fetched := check(func(i int) bool { return i < 3 })
	p.MarkVerified(fetched)
	check(func(int) bool { return true })
}

// A closure counts as held for a vote once its body is stored and each tx
// is stored or in the mempool — before the mempool's are stored — but the
// chain applies only a closure the LeiosDB holds whole.
func TestClosureHeldFromTheMempool(t *testing.T) {
	f := newFunds(t)
	pool := mempoolOver(t, f)
	p := openPipeline(t, testOptions(t))
	if err := p.Attach(nil, pool); err != nil {
		t.Fatal(err)
	}
	raw := f.payments(t, 4, 1_000_000)
	admitRaw(t, pool, raw[:2])
	eb := blocktest.EBOf(t, raw)
	pt := eb.Point(7)
	if err := p.insertAnnouncement(7, block.Hash{7}, eb.Announcement()); err != nil {
		t.Fatal(err)
	}
	// The body alone, as it is stored before the txs at hand are.
	if _, err := p.db.InsertBody(pt, eb.Body.Bytes()); err != nil {
		t.Fatal(err)
	}
	if _, held, err := p.ClosureTxs(pt); err != nil || held {
		t.Fatalf("held %v with two txs nowhere: %v", held, err)
	}
	if err := p.insertTxs(pt, block.HashTxs(raw[2:]), false); err != nil {
		t.Fatal(err)
	}
	if txs, held, err := p.ClosureTxs(pt); err != nil || !held || len(txs) != 4 {
		t.Fatalf("with the rest stored and two in the mempool: %d txs, held %v, %v", len(txs), held, err)
	}
	if _, held, err := p.storedClosureTxs(pt); err != nil || held {
		t.Fatalf("the chain's closure held %v with two txs not stored: %v", held, err)
	}
}

// A closure tx read from the LeiosDB is decoded with the hash it was
// stored under — the one its body names, checked where it came in — not
// hashed again: stored under a label that is not its bytes' hash, it comes
// back with the label.
func TestClosureTxsNotHashedAgain(t *testing.T) {
	f := newFunds(t)
	p := openPipeline(t, testOptions(t))
	raw := f.payments(t, 1, 1_000_000)[0]
	label := block.Hash{0xab}
	body, err := block.NewEBBody([]block.EBTx{{TxHash: label, Size: uint32(len(raw))}}, block.DefaultEBLimits)
	if err != nil {
		t.Fatal(err)
	}
	eb := &blocktest.EB{Body: body, Txs: [][]byte{raw}}
	pt := eb.Point(7)
	if err := p.insertAnnouncement(7, block.Hash{7}, eb.Announcement()); err != nil {
		t.Fatal(err)
	}
	if err := p.insertBody(pt, eb.Body, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.insertTxs(pt, []block.HashedTx{{Hash: label, Bytes: raw}}, false); err != nil {
		t.Fatal(err)
	}
	txs, held, err := p.ClosureTxs(pt)
	if err != nil || !held || len(txs) != 1 {
		t.Fatalf("closure: %d txs, held %v, %v", len(txs), held, err)
	}
	if got := block.Hash(txs[0].Tx.Hash()); got != label {
		t.Fatalf("the closure tx has hash %s, not the %s it was stored under: hashed again", got.Short(), label.Short())
	}
}
