package chaindb

import (
	"crypto/ed25519"
	"encoding/binary"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// benchWallets are the payers of BenchmarkAddBlock: each pays, tx after
// tx, a small output to the next wallet and the rest back to itself, so
// the UTxO grows by one output per tx, as on a busy chain.
type benchWallets struct {
	params ledger.Params
	keys   []ed25519.PrivateKey
	addrs  [][]byte
	head   []ledger.TxIn // each wallet's change output
	coin   []uint64
}

func newBenchWallets(n int) (*benchWallets, ledger.MapUTxO) {
	w := &benchWallets{params: ledger.DefaultParams()}
	genesis := ledger.MapUTxO{}
	for i := range n {
		seed := make([]byte, ed25519.SeedSize)
		binary.BigEndian.PutUint64(seed, uint64(i)+1)
		key := ed25519.NewKeyFromSeed(seed)
		addr := ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
		w.keys, w.addrs = append(w.keys, key), append(w.addrs, addr)
		w.head, w.coin = append(w.head, ledger.GenesisTxIn(addr)), append(w.coin, 1e15)
		genesis[ledger.GenesisTxIn(addr)] = ledger.TxOut{Address: addr, Coin: 1e15}
	}
	return w, genesis
}

// txs builds n txs, round robin over the wallets, each spending its
// wallet's last change.
func (w *benchWallets) txs(b *testing.B, n int) []block.RawCBOR {
	out := make([]block.RawCBOR, n)
	for i := range out {
		j := i % len(w.keys)
		pay := ledger.TxOut{Address: w.addrs[(j+1)%len(w.addrs)], Coin: 2_000_000}
		tx, err := ledger.BuildPayment(w.params, []ledger.TxIn{w.head[j]}, w.coin[j], []ledger.TxOut{pay}, w.addrs[j], nil, []ed25519.PrivateKey{w.keys[j]})
		if err != nil {
			b.Fatal(err)
		}
		w.head[j], w.coin[j] = ledger.TxIn{TxID: tx.ID(), Index: 1}, tx.Outputs[1].Coin
		out[i] = tx.Bytes()
	}
	return out
}

// BenchmarkAddBlock is the chain database's apply path for a block of
// real payments extending the selection: the ledger rules (without the
// witness checks, as for txs the mempool admitted) over the backing store
// and the volatile diffs, then the batch that stores the block, moves the
// tip and flushes the block that became immutable. Pebble runs in memory,
// so the figure is CPU, not fsync.
func BenchmarkAddBlock(b *testing.B) {
	const txsPerBlock = 200
	b.ReportAllocs()
	w, genesis := newBenchWallets(20)
	apply := realApply(w.params)
	opts := Options{
		K:           DefaultK,
		GenesisUTxO: genesis,
		ApplyBlock: func(utxo ledger.UTxO, blk *block.Block, parent *block.Header, _ bool) (*ledger.Diff, error) {
			return apply(utxo, blk, parent, true) // as for txs the mempool admitted
		},
		fs: vfs.NewMem(),
	}
	db := mustOpen(b, "db", opts)
	defer db.Close()
	f := newForger()
	var parent *block.Header
	add := func() {
		blk := f.nextRaw(parent, 1, w.txs(b, txsPerBlock))
		b.StartTimer()
		if _, err := db.AddBlock(blk); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		parent = blk.Header
	}
	b.StopTimer()
	for range 2 * DefaultK { // past k: every block added flushes one
		add()
	}
	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		add()
	}
	b.ReportMetric(float64(b.N*txsPerBlock)/b.Elapsed().Seconds(), "txs/s")
}
