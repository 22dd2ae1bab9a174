package main

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// mpCosts are the simulated costs of the mempool benchmark. CPU costs are
// busy-waits added to the real ledger.Apply / ledger.Reapply (apply: the
// full-validation work the seed measured at ~217 µs/tx; reapply: what a
// resync pays); a ledger read sleeps, as I/O does. The CPU costs are atomics
// so a fill phase can switch them off.
type mpCosts struct {
	apply, reapply       atomic.Int64 // nanoseconds of busy-wait per tx
	readBase, readPerKey time.Duration
}

// spin busy-waits for d: simulated CPU work, not a sleep.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	for start := time.Now(); time.Since(start) < d; {
	}
}

func (c *mpCosts) applyFunc(p ledger.Params, u ledger.UTxO, slot uint64, tx *ledger.Tx) (*ledger.Diff, error) {
	spin(time.Duration(c.apply.Load()))
	return ledger.Apply(p, u, slot, tx)
}

func (c *mpCosts) reapplyFunc(p ledger.Params, u ledger.UTxO, slot uint64, tx *ledger.Tx) (*ledger.Diff, error) {
	spin(time.Duration(c.reapply.Load()))
	return ledger.Reapply(p, u, slot, tx)
}

// mpLedger is the simulated chain: a genesis UTxO that never changes and a
// tip that moves on every advance — a tip change that invalidates nothing,
// as the benchmark's syncer makes. Each Lookup of its views is one ledger read
// of one key and sleeps readBase + readPerKey.
type mpLedger struct {
	utxo  ledger.MapUTxO
	costs *mpCosts

	mu  sync.Mutex // guards tip
	tip block.Tip
}

func newMPLedger(utxo ledger.MapUTxO, costs *mpCosts) *mpLedger {
	return &mpLedger{utxo: utxo, costs: costs, tip: block.Tip{Point: block.Point{Slot: 1, Hash: block.Hash{1}}, BlockNumber: 1}}
}

func (l *mpLedger) TipLedger() (ledger.UTxO, block.Tip, func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return mpSlowView{l}, l.tip, func() {}, nil
}

// advance moves the tip one block on; the UTxO stays.
func (l *mpLedger) advance() {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.tip.BlockNumber + 1
	var h block.Hash
	binary.BigEndian.PutUint64(h[:], n)
	l.tip = block.Tip{Point: block.Point{Slot: l.tip.Point.Slot + 1, Hash: h}, BlockNumber: n}
}

type mpSlowView struct{ l *mpLedger }

func (v mpSlowView) Lookup(in ledger.TxIn) (ledger.TxOut, bool, error) {
	time.Sleep(v.l.costs.readBase + v.l.costs.readPerKey)
	return v.l.utxo.Lookup(in)
}

// mpChains are independent chains of real signed txs, each starting at its
// own genesis output and each tx spending the change of the one before, so
// no two chains conflict and every run (with a fresh mempool on the same
// genesis) can replay them. Built once, in parallel, before any timing.
type mpChains struct {
	genesis ledger.MapUTxO
	chains  [][]*ledger.Tx
}

func buildMPChains(ctx context.Context, n, length int) (*mpChains, error) {
	p := ledger.DefaultParams()
	c := &mpChains{genesis: ledger.MapUTxO{}, chains: make([][]*ledger.Tx, n)}
	keys := make([]ed25519.PrivateKey, n)
	for i := range n {
		seed := make([]byte, ed25519.SeedSize)
		copy(seed, "leiosbench mempool")
		binary.BigEndian.PutUint32(seed[28:], uint32(i))
		keys[i] = ed25519.NewKeyFromSeed(seed)
		addr := ledger.EnterpriseAddress(0, ledger.KeyHash(keys[i].Public().(ed25519.PublicKey)))
		c.genesis[ledger.GenesisTxIn(addr)] = ledger.TxOut{Address: addr, Coin: 1_000_000_000_000}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error {
			addr := ledger.EnterpriseAddress(0, ledger.KeyHash(keys[i].Public().(ed25519.PublicKey)))
			in := ledger.GenesisTxIn(addr)
			coin := c.genesis[in].Coin
			chain := make([]*ledger.Tx, 0, length)
			for range length {
				if err := ctx.Err(); err != nil {
					return err
				}
				tx, err := ledger.BuildPayment(p, []ledger.TxIn{in}, coin, nil, addr, nil, keys[i:i+1])
				if err != nil {
					return err
				}
				chain = append(chain, tx)
				in, coin = ledger.TxIn{TxID: tx.ID()}, tx.Outputs[0].Coin
			}
			c.chains[i] = chain
			return nil
		})
	}
	return c, g.Wait()
}

// forPeer returns the txs peer j of peers submits: its chains (j, j+peers,
// …) one after the other.
func (c *mpChains) forPeer(j, peers int) []*ledger.Tx {
	var txs []*ledger.Tx
	for i := j; i < len(c.chains); i += peers {
		txs = append(txs, c.chains[i]...)
	}
	return txs
}
