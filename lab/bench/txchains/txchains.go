// Package txchains is the simulated chain the mempool and tx-submission
// benchmarks load the mempool from: independent chains of real signed txs
// (each spending the change of the one before), and a ledger whose tip
// applies them chain by chain, with busy-waits and sleeps standing for the
// real node's apply costs and ledger reads.
//
// Invariants: no two chains conflict; a block applies each chain's txs in
// order from its next unapplied one, or is refused; views are immutable.
// It never touches a store: the ledger is a counter per chain.
package txchains

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// Costs are the simulated costs of the mempool benchmark. CPU costs are
// busy-waits added to the real ledger.Apply / ledger.Reapply (apply: the
// full-validation work the Haskell node was measured at, ~217 µs/tx;
// reapply: what a resync pays); ledger reads sleep, as I/O does — ReadBase
// to open a view of the ledger (the Haskell node's forker), ReadPerKey for
// each key read through it. The CPU costs are atomics so a fill phase can
// switch them off.
type Costs struct {
	Apply, Reapply       atomic.Int64 // nanoseconds of busy-wait per tx
	ReadBase, ReadPerKey time.Duration
}

// spin busy-waits for d: simulated CPU work, not a sleep.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	for start := time.Now(); time.Since(start) < d; {
	}
}

// ApplyFunc is ledger.Apply after the apply cost, for mempool.Options.
func (c *Costs) ApplyFunc(p ledger.Params, u ledger.UTxO, slot uint64, tx *ledger.Tx) (*ledger.Diff, error) {
	spin(time.Duration(c.Apply.Load()))
	return ledger.Apply(p, u, slot, tx)
}

// ReapplyFunc is ledger.Reapply after the reapply cost.
func (c *Costs) ReapplyFunc(p ledger.Params, u ledger.UTxO, slot uint64, tx *ledger.Tx) (*ledger.Diff, error) {
	spin(time.Duration(c.Reapply.Load()))
	return ledger.Reapply(p, u, slot, tx)
}

// Chains are independent chains of real signed txs, each starting at its
// own genesis output and each tx spending the change (its only output) of
// the one before, so no two chains conflict and every run, on a fresh
// ledger, can replay them. Built once, in parallel, before any timing.
type Chains struct {
	genesis ledger.MapUTxO
	Txs     [][]*ledger.Tx
	// genesisChain is the chain each genesis output starts; at places each
	// tx by its id.
	genesisChain map[ledger.TxIn]int
	at           map[[32]byte]chainPos
}

// chainPos is tx i of chain c.
type chainPos struct{ c, i int32 }

// Build makes n chains of length txs each, in parallel.
func Build(ctx context.Context, n, length int) (*Chains, error) {
	p := ledger.DefaultParams()
	c := &Chains{genesis: ledger.MapUTxO{}, Txs: make([][]*ledger.Tx, n), genesisChain: map[ledger.TxIn]int{}, at: map[[32]byte]chainPos{}}
	keys := make([]ed25519.PrivateKey, n)
	for i := range n {
		seed := make([]byte, ed25519.SeedSize)
		copy(seed, "leiosbench mempool")
		binary.BigEndian.PutUint32(seed[28:], uint32(i))
		keys[i] = ed25519.NewKeyFromSeed(seed)
		addr := ledger.EnterpriseAddress(0, ledger.KeyHash(keys[i].Public().(ed25519.PublicKey)))
		in := ledger.GenesisTxIn(addr)
		c.genesis[in] = ledger.TxOut{Address: addr, Coin: 1_000_000_000_000}
		c.genesisChain[in] = i
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
			c.Txs[i] = chain
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for ci, chain := range c.Txs {
		for i, tx := range chain {
			c.at[tx.ID()] = chainPos{int32(ci), int32(i)}
		}
	}
	return c, nil
}

// ForPeer returns the txs peer j of peers submits: its chains (j, j+peers,
// …) one after the other.
func (c *Chains) ForPeer(j, peers int) []*ledger.Tx {
	var txs []*ledger.Tx
	for i := j; i < len(c.Txs); i += peers {
		txs = append(txs, c.Txs[i]...)
	}
	return txs
}

// Ledger is the simulated chain. Its state is how many txs of each chain
// the adopted blocks applied: a chain's only unspent output is the change
// of its last applied tx (its genesis output if none). Adopting a block
// moves the tip and applies the block's txs, so the mempool's next sync
// drops them; a block of no txs is a tip change that invalidates nothing.
// Views are immutable: each reads the state of its tip.
type Ledger struct {
	chains *Chains
	costs  *Costs

	mu      sync.Mutex // guards tip and applied
	tip     block.Tip
	applied []int32 // replaced, never changed, on adoption
}

// NewLedger is a ledger at its genesis, reading with costs.
func NewLedger(chains *Chains, costs *Costs) *Ledger {
	return &Ledger{
		chains:  chains,
		costs:   costs,
		tip:     block.Tip{Point: block.Point{Slot: 1, Hash: block.Hash{1}}, BlockNumber: 1},
		applied: make([]int32, len(chains.Txs)),
	}
}

// TipLedger opens a view of the tip: one ledger read session (ReadBase).
func (l *Ledger) TipLedger() (ledger.UTxO, block.Tip, func(), error) {
	time.Sleep(l.costs.ReadBase)
	l.mu.Lock()
	defer l.mu.Unlock()
	return mpView{l, l.applied}, l.tip, func() {}, nil
}

// Adopt applies a block of txs (in order: each chain's txs consecutive
// from its next unapplied one) and moves the tip one block on.
func (l *Ledger) Adopt(txs []*ledger.Tx) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	applied := append([]int32(nil), l.applied...)
	for _, tx := range txs {
		pos, ok := l.chains.at[tx.ID()]
		if !ok || applied[pos.c] != pos.i {
			return fmt.Errorf("block tx %x does not extend its chain (at %v, %d applied)", tx.ID(), pos, applied[pos.c])
		}
		applied[pos.c]++
	}
	n := l.tip.BlockNumber + 1
	var h block.Hash
	binary.BigEndian.PutUint64(h[:], n)
	l.tip, l.applied = block.Tip{Point: block.Point{Slot: l.tip.Point.Slot + 1, Hash: h}, BlockNumber: n}, applied
	return nil
}

// mpView is the UTxO at one tip; each Lookup is one key read (ReadPerKey).
type mpView struct {
	l       *Ledger
	applied []int32
}

func (v mpView) Lookup(in ledger.TxIn) (ledger.TxOut, bool, error) {
	time.Sleep(v.l.costs.ReadPerKey)
	c := v.l.chains
	if chain, ok := c.genesisChain[in]; ok {
		if v.applied[chain] != 0 {
			return ledger.TxOut{}, false, nil
		}
		return c.genesis[in], true, nil
	}
	pos, ok := c.at[in.TxID]
	if !ok || in.Index != 0 || v.applied[pos.c] != pos.i+1 {
		return ledger.TxOut{}, false, nil
	}
	return c.Txs[pos.c][pos.i].Outputs[0], true, nil
}

// SleepUntil sleeps until t, the time a paced load sends its next tx;
// false if ctx ended first.
func SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
