package mempool

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// chainModel drives a mempool on a testChain through random chain changes
// and checks every sync against one full revalidation: ledger.Reapply of
// the txs held before it (and those added during it), in ticket order, on
// the new tip's UTxO.
type chainModel struct {
	w     *wallet
	chain *testChain
	m     *Mempool

	wallClock bool          // Options.Slot is clock; else the slot after the tip
	clock     atomic.Uint64 // the wall clock's slot
	now       atomic.Int64  // Options.Now's nanoseconds, one tick a call

	// The model of the mempool: the txs held in ticket order, the tip they
	// were validated against, the UTxO after them, and when each was admitted.
	held     []*ledger.Tx
	heldAt   *chainBlock
	after    ledger.MapUTxO
	admitted map[block.Hash]time.Time

	probes map[ledger.TxIn]struct{} // every input and output of every tx built, and genesis
	during [][]*ledger.Tx           // adds the next sync makes after each of its rounds
	stats  *chainStats
}

// chainStats counts what the property test checked, over all its runs.
type chainStats struct {
	syncs   [SyncExtension + 1]int // by path
	judged  int
	dropped int
	lookups int
}

func (cm *chainModel) slot() uint64 {
	if cm.wallClock {
		return cm.clock.Load()
	}
	return cm.m.Snapshot().Tip().Point.Slot + 1
}

// coin values of the txs the model builds: the mempool's pay a fee of one
// ada, the chain's own (conflicting or foreign) a little more, so the two
// never build the same body.
const (
	mempoolFee = 1_000_000
	chainFee   = 1_100_000
	splitCoin  = 3_000_000
	minChange  = 2_000_000
)

// build makes a tx of key k spending ins (outputs of k, worth total),
// paying split to key to if split > 0, the change back to k.
func (cm *chainModel) build(t *rapid.T, k int, ins []ledger.TxIn, total, fee uint64, to int, split uint64, ttl, start *uint64) (*ledger.Tx, bool) {
	if total < fee+split+minChange {
		return nil, false
	}
	var outs []ledger.TxOut
	if split > 0 {
		outs = append(outs, ledger.TxOut{Address: cm.w.addrs[to], Coin: split})
	}
	outs = append(outs, ledger.TxOut{Address: cm.w.addrs[k], Coin: total - fee - split})
	tx, err := ledger.TxBody{Inputs: ins, Outputs: outs, Fee: fee, TTL: ttl, ValidityStart: start}.Build([]ed25519.PrivateKey{cm.w.keys[k]})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range tx.Inputs {
		cm.probes[in] = struct{}{}
	}
	for i := range tx.Outputs {
		cm.probes[ledger.TxIn{TxID: tx.ID(), Index: uint32(i)}] = struct{}{}
	}
	return tx, true
}

// spendFrom draws a tx spending one or two outputs of one key unspent in
// u, valid at slot, with fee fee. With bounds, it may carry a ttl (a
// few slots on) and a validity start (at most slot).
func (cm *chainModel) spendFrom(t *rapid.T, u ledger.MapUTxO, slot, fee uint64, bounds bool) (*ledger.Tx, bool) {
	k := rapid.IntRange(0, len(cm.w.keys)-1).Draw(t, "key")
	var mine []ledger.TxIn
	for in, out := range u {
		if bytes.Equal(out.Address, cm.w.addrs[k]) {
			mine = append(mine, in)
		}
	}
	if len(mine) == 0 {
		return nil, false
	}
	slices.SortFunc(mine, compareTxIn)
	ins := []ledger.TxIn{rapid.SampledFrom(mine).Draw(t, "input")}
	if len(mine) > 1 && rapid.Bool().Draw(t, "two inputs") {
		if second := rapid.SampledFrom(mine).Draw(t, "second input"); second != ins[0] {
			ins = append(ins, second)
		}
	}
	var total uint64
	for _, in := range ins {
		total += u[in].Coin
	}
	var ttl, start *uint64
	if bounds && rapid.IntRange(0, 3).Draw(t, "ttl") == 0 {
		v := slot + rapid.Uint64Range(1, 4).Draw(t, "ttl slots")
		ttl = &v
	}
	if bounds && rapid.IntRange(0, 2).Draw(t, "validity start") == 0 {
		v := slot - min(slot, rapid.Uint64Range(0, 1).Draw(t, "start slots before"))
		start = &v
	}
	var split uint64
	if rapid.Bool().Draw(t, "split") {
		split = splitCoin
	}
	return cm.build(t, k, ins, total, fee, rapid.IntRange(0, len(cm.w.keys)-1).Draw(t, "pay to"), split, ttl, start)
}

// admit adds a tx spending outputs the mempool's UTxO holds: chain outputs
// or those of held txs, so chains of dependent txs grow.
func (cm *chainModel) admit(t *rapid.T) {
	tx, ok := cm.spendFrom(t, cm.after, cm.slot(), mempoolFee, true)
	if !ok {
		t.Skip("nothing to spend")
	}
	cm.add(t, tx)
}

// add admits tx, valid on the model, and records when.
func (cm *chainModel) add(t *rapid.T, tx *ledger.Tx) {
	if err := cm.m.Add(context.Background(), tx); err != nil {
		t.Fatalf("add of a valid tx: %v", err)
	}
	d, err := ledger.Reapply(params, cm.after, cm.slot(), tx)
	if err != nil {
		t.Fatalf("model: %v", err)
	}
	cm.after = maps.Clone(cm.after)
	applyDiff(cm.after, d)
	cm.held = append(cm.held, tx)
	e, ok := cm.m.Snapshot().Lookup(tx.Hash())
	if !ok || !e.Admitted.Equal(time.Unix(0, cm.now.Load())) {
		t.Fatalf("admitted tx at %v (%v), clock at %d", e.Admitted, ok, cm.now.Load())
	}
	cm.admitted[tx.Hash()] = e.Admitted
}

// blockTxs draws the txs of a block after parent: held txs (any subset the
// ledger takes, in ticket order: a prefix, or skipping some with their
// dependents), txs that conflict with held ones, and txs the mempool never
// saw (which may spend what an included held tx created).
func (cm *chainModel) blockTxs(t *rapid.T, parent *chainBlock, slot uint64) []*ledger.Tx {
	u := maps.Clone(parent.utxo)
	var txs []*ledger.Tx
	include := rapid.IntRange(0, 4).Draw(t, "include held") // out of 4: 0 none, 4 all that fit
	for _, tx := range cm.held {
		if include == 0 || rapid.IntRange(1, 4).Draw(t, "include it") > include {
			continue
		}
		if d, err := ledger.Reapply(params, u, slot, tx); err == nil {
			applyDiff(u, d)
			txs = append(txs, tx)
		}
	}
	for range rapid.IntRange(0, 2).Draw(t, "conflicts") {
		var open []ledger.TxIn // inputs of held txs still unspent here
		for _, tx := range cm.held {
			for _, in := range tx.Inputs {
				if _, ok := u[in]; ok {
					open = append(open, in)
				}
			}
		}
		if len(open) == 0 {
			break
		}
		in := rapid.SampledFrom(open).Draw(t, "conflict input")
		out := u[in]
		k := cm.w.keyOf(out.Address)
		if tx, ok := cm.build(t, k, []ledger.TxIn{in}, out.Coin, chainFee, k, 0, nil, nil); ok {
			applyDiff(u, mustReapply(t, u, slot, tx))
			txs = append(txs, tx)
		}
	}
	for range rapid.IntRange(0, 2).Draw(t, "foreign txs") {
		if tx, ok := cm.spendFrom(t, u, slot, chainFee, false); ok {
			applyDiff(u, mustReapply(t, u, slot, tx))
			txs = append(txs, tx)
		}
	}
	return txs
}

func mustReapply(t *rapid.T, u ledger.MapUTxO, slot uint64, tx *ledger.Tx) *ledger.Diff {
	d, err := ledger.Reapply(params, u, slot, tx)
	if err != nil {
		t.Fatalf("model block tx: %v", err)
	}
	return d
}

// addBlocks adds n blocks after parent, each 1 to 3 slots after the one
// before (an empty one lets ttls pass), and moves the wall clock.
func (cm *chainModel) addBlocks(t *rapid.T, parent *chainBlock, n int) {
	for range n {
		gap := rapid.Uint64Range(1, 3).Draw(t, "slot gap")
		txs := cm.blockTxs(t, parent, parent.tip.Point.Slot+gap)
		b, err := cm.chain.add(parent, gap, txs)
		if err != nil {
			t.Fatal(err)
		}
		parent = b
	}
	// The wall clock moves on, now and then back a slot or two (a stepped
	// clock): the sync judges validity starts too.
	step := rapid.IntRange(-2, 3).Draw(t, "clock step")
	cm.clock.Store(uint64(max(1, int64(cm.clock.Load())+int64(step))))
}

// extend adds one or two blocks on the tip.
func (cm *chainModel) extend(t *rapid.T) {
	cm.addBlocks(t, cm.chain.tip(), rapid.IntRange(1, 2).Draw(t, "blocks"))
}

// fork adds a fork off a volatile block before the tip, longer than the
// selection: a rollback.
func (cm *chainModel) fork(t *rapid.T) {
	vol := cm.chain.volatile()
	if len(vol) < 2 {
		t.Skip("no block to roll back")
	}
	from := rapid.SampledFrom(vol[:len(vol)-1]).Draw(t, "fork from")
	depth := int(cm.chain.tip().tip.BlockNumber - from.tip.BlockNumber)
	cm.addBlocks(t, from, depth+rapid.IntRange(1, 2).Draw(t, "lead"))
}

// planAdds draws txs to add while the next sync works, after each of its
// rounds: valid on the mempool's state, extending it.
func (cm *chainModel) planAdds(t *rapid.T) {
	cm.during = nil
	u := maps.Clone(cm.after)
	for range 3 {
		var batch []*ledger.Tx
		for range rapid.IntRange(0, 3).Draw(t, "adds during the sync") {
			tx, ok := cm.spendFrom(t, u, cm.slot(), mempoolFee, true)
			if !ok {
				break
			}
			applyDiff(u, mustReapply(t, u, cm.slot(), tx))
			batch = append(batch, tx)
		}
		cm.during = append(cm.during, batch)
	}
}

// sync syncs and checks the result against the full revalidation oracle.
func (cm *chainModel) sync(t *rapid.T) {
	cm.planAdds(t)
	before := cm.m.Snapshot()
	tip := cm.chain.tip()
	wantPath := SyncFull
	if cm.chain.onSelected(before.Tip().Point) {
		wantPath = SyncExtension
	}
	slot := tip.tip.Point.Slot + 1
	if cm.wallClock {
		slot = cm.clock.Load()
	}
	r, err := cm.m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tip == cm.heldAt {
		if r.Synced {
			t.Fatalf("sync at an unchanged tip did work: %+v", r)
		}
		return
	}
	kept, dropped, after := revalidate(tip.utxo, slot, cm.held)
	if !r.Synced || r.Tip != tip.tip || r.Path != wantPath || !equalHashes(r.Dropped, hashes(dropped)) || r.Revalidated != len(cm.held) {
		t.Fatalf("sync %+v\nwant the %s path to %s, %d judged, dropping %s", r, wantPath, tip.tip, len(cm.held), short(hashes(dropped)))
	}
	checkSnapshot(t, cm.m.Snapshot(), kept, after, slices.Collect(maps.Keys(cm.probes)))
	cm.stats.syncs[r.Path]++
	cm.stats.judged += r.Revalidated
	cm.stats.dropped += len(r.Dropped)
	cm.stats.lookups += r.ViewLookups
	cm.held, cm.heldAt, cm.after = kept, tip, after
	cm.checkAdmitted(t)
}

// checkAdmitted: every tx kept its admission time; the oldest is the
// first's.
func (cm *chainModel) checkAdmitted(t *rapid.T) {
	s := cm.m.Snapshot()
	for e := range s.All() {
		if want := cm.admitted[e.Tx.Hash()]; !e.Admitted.Equal(want) {
			t.Fatalf("tx %s admitted at %v, was %v", block.Hash(e.Tx.Hash()).Short(), e.Admitted, want)
		}
	}
	oldest, ok := s.OldestAdmitted()
	if ok != (s.Len() > 0) || ok && !oldest.Equal(cm.admitted[cm.held[0].Hash()]) {
		t.Fatalf("OldestAdmitted = %v, %v with %d txs", oldest, ok, s.Len())
	}
}

// The sync's property on a chain with forks: after any chain changes —
// blocks that include held txs (a prefix or any subset the ledger takes),
// conflict with them, hold txs the mempool never saw, let ttls pass;
// several at once, flushed past the immutable tip, or rolled back onto
// another fork — the committed snapshot is the full revalidation's: the
// txs in ticket order, their bytes, the UTxO after them on every input and
// output involved. An extension of the old tip takes the extension path,
// anything else the full one. Adds made during the sync's rounds are
// judged with the rest.
func TestPropertySyncOnAChainWithForks(t *testing.T) {
	w := newWallet(4)
	stats := &chainStats{}
	rapid.Check(t, func(t *rapid.T) {
		genesis := ledger.MapUTxO{}
		for k := range w.keys {
			for j := range rapid.IntRange(1, 3).Draw(t, "genesis outputs") {
				in := ledger.TxIn{TxID: [32]byte{0xee, byte(k), byte(j)}, Index: uint32(rapid.IntRange(0, 2).Draw(t, "genesis index"))}
				genesis[in] = ledger.TxOut{Address: w.addrs[k], Coin: rapid.Uint64Range(20, 2000).Draw(t, "genesis ada") * 1_000_000}
			}
		}
		cm := &chainModel{
			w: w, chain: newTestChain(rapid.IntRange(2, 5).Draw(t, "k"), genesis),
			wallClock: rapid.Bool().Draw(t, "wall clock"),
			admitted:  map[block.Hash]time.Time{},
			probes:    map[ledger.TxIn]struct{}{},
			stats:     stats,
		}
		for in := range genesis {
			cm.probes[in] = struct{}{}
		}
		cm.clock.Store(1)
		cm.heldAt, cm.after = cm.chain.tip(), genesis
		opts := Options{
			TipLedger:     cm.chain.TipLedger,
			TipChanged:    cm.chain.TipChanged,
			Now:           func() time.Time { return time.Unix(0, cm.now.Add(1)) },
			SyncDeltaCap:  rapid.IntRange(1, 3).Draw(t, "delta cap"),
			SyncMaxRounds: rapid.IntRange(1, 3).Draw(t, "max rounds"),
		}
		if cm.wallClock {
			opts.Slot = cm.clock.Load
		}
		opts.hooks.afterRevalidate = func(round int) {
			if round < len(cm.during) {
				for _, tx := range cm.during[round] {
					cm.add(t, tx)
				}
			}
		}
		var err error
		if cm.m, err = New(opts); err != nil {
			t.Fatal(err)
		}
		defer func() {
			cm.m.Close()
			if n := cm.chain.open.Load(); n != 0 {
				t.Fatalf("%d ledger views never released", n)
			}
		}()
		t.Repeat(map[string]func(*rapid.T){
			"admit":       cm.admit,
			"admit more":  cm.admit,
			"extend":      cm.extend,
			"extend more": cm.extend,
			"fork":        cm.fork,
			"sync":        cm.sync,
			"sync again":  cm.sync,
			"": func(t *rapid.T) {
				checkSnapshot(t, cm.m.Snapshot(), cm.held, cm.after, slices.Collect(maps.Keys(cm.probes)))
			},
		})
	})
	t.Logf("syncs: %d extension, %d full (after a rollback, or the old tip flushed); %d txs judged, %d dropped, %d inputs looked up",
		stats.syncs[SyncExtension], stats.syncs[SyncFull], stats.judged, stats.dropped, stats.lookups)
}
