package chaindb

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/ledger"
)

func TestOpenEmpty(t *testing.T) {
	genesis := testGenesis(3)
	db := mustOpen(t, "db", testOptions(3, genesis, vfs.NewMem()))
	defer db.Close()

	origin := block.Tip{Point: block.Origin}
	if db.Tip() != origin || db.ImmutableTip() != origin {
		t.Fatalf("tip %s, immutable %s; want origin", db.Tip(), db.ImmutableTip())
	}
	if _, err := db.BlockByNumber(1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("BlockByNumber(1) = %v, want ErrNotFound", err)
	}
	if p, ok := db.FindIntersect([]block.Point{{Slot: 3, Hash: block.Hash{1}}, block.Origin}); !ok || p != block.Origin {
		t.Fatalf("FindIntersect = %s %v, want origin", p, ok)
	}
	if _, ok := db.FindIntersect([]block.Point{{Slot: 3, Hash: block.Hash{1}}}); ok {
		t.Fatal("FindIntersect found an unknown point")
	}
	view, tip := db.TipLedger()
	defer view.Close()
	if tip != origin {
		t.Fatalf("TipLedger tip %s", tip)
	}
	checkLedger(t, view, genesis, keysOf(genesis))
}

func keysOf(m ledger.MapUTxO) map[ledger.TxIn]struct{} {
	out := map[ledger.TxIn]struct{}{}
	for in := range m {
		out[in] = struct{}{}
	}
	return out
}

func TestExtendMovesImmutableTip(t *testing.T) {
	const k = 3
	genesis := testGenesis(4)
	db := mustOpen(t, "db", testOptions(k, genesis, vfs.NewMem()))
	defer db.Close()
	f := newForger()

	// Each block spends the previous output and creates one.
	var blocks []*block.Block
	var parent *block.Header
	spend := ledger.TxIn{TxID: [32]byte{0xee}, Index: 0}
	for range 7 {
		tx := testTx{Spend: []ledger.TxIn{spend}, Outs: []testOut{{Addr: []byte("a"), Coin: 5}}}
		b := f.next(parent, 2, tx)
		res := mustAdd(t, db, b)
		if !res.Adopted || res.Tip != tipOf(b) || res.RolledBack != 0 {
			t.Fatalf("AddBlock(#%d) = %+v", b.Header.BlockNumber, res)
		}
		blocks = append(blocks, b)
		parent = b.Header
		spend = ledger.TxIn{TxID: block.HashBytes(encodeTx(tx)), Index: 0}
	}
	chain := checkChain(t, db)
	if db.ImmutableTip() != tipOf(blocks[3]) {
		t.Fatalf("immutable tip %s, want #4", db.ImmutableTip())
	}

	got, err := db.BlockRange(blocks[1].Point(), blocks[5].Point())
	if err != nil || len(got) != 5 || got[0].Hash() != blocks[1].Hash() || got[4].Hash() != blocks[5].Hash() {
		t.Fatalf("BlockRange #2..#6 = %d blocks, %v", len(got), err)
	}
	if _, err := db.BlockRange(blocks[5].Point(), blocks[1].Point()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("reversed BlockRange: %v", err)
	}
	if p, ok := db.FindIntersect([]block.Point{{Slot: 99, Hash: block.Hash{9}}, blocks[1].Point(), blocks[6].Point()}); !ok || p != blocks[1].Point() {
		t.Fatalf("FindIntersect picked %s %v, want the immutable #2", p, ok)
	}

	// Views exist at the immutable tip and after it, not before.
	for i, b := range blocks {
		view, err := db.LedgerAt(b.Point())
		if i < 3 {
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("LedgerAt(#%d) below the immutable tip: %v", i+1, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("LedgerAt(#%d): %v", i+1, err)
		}
		model := replay(t, genesis, chain[:i+1])
		universe := keysOf(model)
		for in := range keysOf(replay(t, genesis, chain)) {
			universe[in] = struct{}{}
		}
		checkLedger(t, view, model, universe)
		view.Close()
	}
	// The backing store holds exactly the UTxO at the immutable tip.
	if got, want := backingKeys(t, db), keysOf(replay(t, genesis, chain[:4])); len(got) != len(want) {
		t.Fatalf("backing store has %d keys, model %d", len(got), len(want))
	}

	// Blocks reads a range one block at a time, holding no lock between
	// blocks: a block added mid-range (which takes the write lock and moves
	// the immutable tip past blocks the range noted as volatile) neither
	// waits for the reader nor changes what it reads.
	seq, err := db.Blocks(blocks[1].Point(), blocks[5].Point())
	if err != nil {
		t.Fatal(err)
	}
	var streamed []block.Hash
	for blk, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		streamed = append(streamed, blk.Hash())
		if len(streamed) == 1 {
			tx := testTx{Spend: []ledger.TxIn{spend}, Outs: []testOut{{Addr: []byte("a"), Coin: 5}}}
			b := f.next(parent, 2, tx)
			mustAdd(t, db, b)
			blocks, parent = append(blocks, b), b.Header
			spend = ledger.TxIn{TxID: block.HashBytes(encodeTx(tx)), Index: 0}
		}
	}
	if len(streamed) != 5 || streamed[0] != blocks[1].Hash() || streamed[4] != blocks[5].Hash() || db.ImmutableTip() != tipOf(blocks[4]) {
		t.Fatalf("Blocks #2..#6 streamed %d blocks, immutable tip %s", len(streamed), db.ImmutableTip())
	}
}

func TestAddBlockRefusals(t *testing.T) {
	const k = 2
	f := newForger()
	main := f.chain(nil, 5) // #1..#5: immutable tip #3 once all are in
	spendMissing := testTx{Spend: []ledger.TxIn{{TxID: [32]byte{1}}}}

	wrongNumber := func() *block.Block {
		b := f.next(main[4].Header, 1)
		hb := b.Header.HeaderBody
		hb.BlockNumber = 9
		return block.NewBlock(block.NewHeader(hb, f.key), b.Body)
	}()
	sameSlot := f.next(main[4].Header, 0)
	badSig := func() *block.Block {
		b := f.next(main[4].Header, 1)
		h := block.NewHeader(b.Header.HeaderBody, newOtherKey())
		return block.NewBlock(h, b.Body)
	}()
	goodChild := f.next(main[4].Header, 1)
	wrongBody := block.NewBlock(goodChild.Header, block.NewBody([]block.RawCBOR{encodeTx(testTx{})}, nil))
	invalidTx := f.next(main[4].Header, 1, spendMissing)
	childOfInvalid := f.next(invalidTx.Header, 1)
	deepFork := f.next(main[1].Header, 7) // forks off #2, below the immutable tip
	orphan := f.next(f.next(main[4].Header, 1).Header, 1)

	for _, tc := range []struct {
		name    string
		blk     *block.Block
		want    error
		recheck bool // the refusal is remembered: a second add fails without validation
	}{
		{"duplicate volatile", main[4], nil, false},
		{"duplicate immutable", main[0], nil, false},
		{"unknown predecessor", orphan, ErrUnknownPredecessor, false},
		{"fork too deep", deepFork, ErrForkTooDeep, false},
		{"wrong block number", wrongNumber, ErrInvalidBlock, true},
		{"slot not after predecessor", sameSlot, ErrInvalidBlock, true},
		{"bad signature", badSig, ErrInvalidBlock, true},
		{"body does not match header", wrongBody, ErrInvalidBlock, false},
		{"ledger rejects", invalidTx, ErrInvalidBlock, true},
		{"descendant of invalid", childOfInvalid, ErrInvalidBlock, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			opts := testOptions(k, testGenesis(2), vfs.NewMem())
			opts.ApplyBlock = testApply(&calls)
			db := mustOpen(t, "db", opts)
			defer db.Close()
			mustAdd(t, db, main...)
			if tc.name == "descendant of invalid" {
				db.AddBlock(invalidTx)
			}
			tip := db.Tip()
			calls = 0
			res, err := db.AddBlock(tc.blk)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("AddBlock = %v, want %v", err, tc.want)
			}
			if res.Adopted || res.Tip != tip || db.Tip() != tip {
				t.Fatalf("selection moved: %+v, tip %s, was %s", res, db.Tip(), tip)
			}
			if tc.recheck {
				before := calls
				if _, err := db.AddBlock(tc.blk); !errors.Is(err, ErrInvalidBlock) {
					t.Fatalf("second AddBlock = %v, want ErrInvalidBlock", err)
				}
				if calls != before {
					t.Fatal("a known-invalid block was validated again")
				}
			}
			checkChain(t, db)
		})
	}

	// A body mismatch is not held against the header: the right body is
	// accepted afterwards.
	db := mustOpen(t, "db", testOptions(k, testGenesis(2), vfs.NewMem()))
	defer db.Close()
	mustAdd(t, db, main...)
	if _, err := db.AddBlock(wrongBody); !errors.Is(err, ErrInvalidBlock) {
		t.Fatalf("wrong body: %v", err)
	}
	if res := mustAdd(t, db, goodChild); !res.Adopted {
		t.Fatal("the right block was not adopted after a wrong body")
	}
}

func newOtherKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 1
	return ed25519.NewKeyFromSeed(seed)
}

func TestForkSwitch(t *testing.T) {
	const k = 4
	genesis := testGenesis(2)
	db := mustOpen(t, "db", testOptions(k, genesis, vfs.NewMem()))
	defer db.Close()
	f := newForger()
	a := f.chain(nil, 5)           // A1..A5
	b := f.chain(a[1].Header, 4)   // B3..B6, forking off A2
	tie := f.chain(a[2].Header, 2) // C4..C5: as long as A, must not win
	mustAdd(t, db, a...)

	follower, err := db.NewFollower(a[4].Point())
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	changed := db.TipChanged()

	for _, blk := range append(tie, b[:3]...) {
		if res := mustAdd(t, db, blk); res.Adopted {
			t.Fatalf("a chain no longer than the selection was adopted: %s", res.Tip)
		}
	}
	select {
	case <-changed:
		t.Fatal("TipChanged fired without a selection change")
	default:
	}
	res := mustAdd(t, db, b[3])
	if !res.Adopted || res.Tip != tipOf(b[3]) || res.RolledBack != 3 {
		t.Fatalf("switch: %+v, want tip B6 with 3 rolled back", res)
	}
	<-changed // closed by the switch
	checkChain(t, db)

	// The follower at A5 rolls back to A2, then rolls forward along B.
	want := []block.ChainUpdate{{Kind: block.RollBackward, Point: a[1].Point()}}
	for _, blk := range b {
		want = append(want, block.ChainUpdate{Kind: block.RollForward, Header: blk.Header})
	}
	for i, w := range want {
		u, ok, err := follower.TryNext()
		if err != nil || !ok || u.Kind != w.Kind || (w.Kind == block.RollBackward && u.Point != w.Point) ||
			(w.Kind == block.RollForward && u.Header.Hash() != w.Header.Hash()) {
			t.Fatalf("update %d: %+v %v %v, want %+v", i, u, ok, err, w)
		}
	}
	if _, ok, _ := follower.TryNext(); ok {
		t.Fatal("follower at the tip has another update")
	}

	view, tip := db.TipLedger()
	defer view.Close()
	if tip != tipOf(b[3]) {
		t.Fatalf("TipLedger at %s", tip)
	}
	chain := append(append([]*block.Block{}, a[:2]...), b...)
	checkLedger(t, view, replay(t, genesis, chain), keysOf(genesis))
}

// TestAbandoned: after a fork switch the old tip's blocks off the new
// selection are abandoned, oldest first; a tip still on the selection
// abandons nothing, and neither does one whose fork was pruned.
func TestAbandoned(t *testing.T) {
	const k = 3
	db := mustOpen(t, "db", testOptions(k, testGenesis(2), vfs.NewMem()))
	defer db.Close()
	f := newForger()
	a := f.chain(nil, 4)
	b := f.chain(a[1].Header, 3) // B3..B5, forking off A2: A3, A4 are rolled back
	mustAdd(t, db, a...)
	mustAdd(t, db, b...)
	abandoned := func(old *block.Block) []block.Hash {
		t.Helper()
		blocks, err := db.Abandoned(tipOf(old))
		if err != nil {
			t.Fatal(err)
		}
		var hashes []block.Hash
		for _, blk := range blocks {
			hashes = append(hashes, blk.Hash())
		}
		return hashes
	}
	if got := abandoned(a[3]); len(got) != 2 || got[0] != a[2].Hash() || got[1] != a[3].Hash() {
		t.Fatalf("abandoned since A4: %s, want A3, A4", short(got))
	}
	for _, old := range []*block.Block{a[1], b[1], b[2]} {
		if got := abandoned(old); len(got) != 0 {
			t.Fatalf("abandoned since #%d on the selection: %s", old.Header.BlockNumber, short(got))
		}
	}
	if blocks, err := db.Abandoned(block.Tip{Point: block.Origin}); err != nil || len(blocks) != 0 {
		t.Fatalf("abandoned since origin: %d blocks, %v", len(blocks), err)
	}
	mustAdd(t, db, f.chain(b[2].Header, 1)...) // the immutable tip passes A2: A3, A4 are pruned
	if got := abandoned(a[3]); len(got) != 0 {
		t.Fatalf("abandoned since a pruned fork: %s", short(got))
	}
}

func short(hashes []block.Hash) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = h.Short()
	}
	return out
}

func TestInvalidForkKeepsSelection(t *testing.T) {
	const k = 5
	genesis := testGenesis(2)
	db := mustOpen(t, "db", testOptions(k, genesis, vfs.NewMem()))
	defer db.Close()
	f := newForger()
	a := f.chain(nil, 3)
	mustAdd(t, db, a...)

	// B2, B3 (spends a missing input), B4: B4 makes the fork longer, the
	// switch fails at B3, and B2 alone is not longer than A3.
	b2 := f.next(a[0].Header, 5)
	b3 := f.next(b2.Header, 1, testTx{Spend: []ledger.TxIn{{TxID: [32]byte{7}}}})
	b4 := f.next(b3.Header, 1)
	mustAdd(t, db, b2, b3)
	res, err := db.AddBlock(b4)
	if !errors.Is(err, ErrInvalidBlock) || !errors.Is(err, errMissingInput) {
		t.Fatalf("AddBlock(B4) = %v, want ErrInvalidBlock wrapping the ledger's reason", err)
	}
	if res.Adopted || db.Tip() != tipOf(a[2]) {
		t.Fatalf("selection moved to %s", db.Tip())
	}
	for _, blk := range []*block.Block{b3, b4, f.next(b4.Header, 1)} {
		if _, err := db.AddBlock(blk); !errors.Is(err, ErrInvalidBlock) {
			t.Fatalf("AddBlock(#%d) after the fork failed = %v", blk.Header.BlockNumber, err)
		}
	}
	if _, err := db.Block(b3.Hash()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the invalid block is still stored: %v", err)
	}
	// B2 is still a valid fork block: a valid extension of it wins.
	c := f.chain(b2.Header, 2)
	mustAdd(t, db, c[0])
	if res := mustAdd(t, db, c[1]); !res.Adopted || res.RolledBack != 2 || res.Tip != tipOf(c[1]) {
		t.Fatalf("valid fork: %+v", res)
	}
	checkChain(t, db)
}

func TestReopen(t *testing.T) {
	const k = 3
	fs := vfs.NewMem()
	genesis := testGenesis(2)
	db := mustOpen(t, "db", testOptions(k, genesis, fs))
	f := newForger()
	a := f.chain(nil, 6)
	fork := f.chain(a[3].Header, 1) // a stored fork block off #4
	mustAdd(t, db, a...)
	mustAdd(t, db, fork...)
	view, _ := db.TipLedger()
	follower, err := db.NewFollower(block.Origin)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := view.Lookup(ledger.TxIn{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Lookup after Close: %v", err)
	}
	if _, err := follower.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	if _, err := db.AddBlock(f.next(a[5].Header, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("AddBlock after Close: %v", err)
	}
	view.Close()
	follower.Close()

	db = mustOpen(t, "db", testOptions(k, genesis, fs))
	defer db.Close()
	if db.Tip() != tipOf(a[5]) {
		t.Fatalf("reopened at %s, want %s", db.Tip(), tipOf(a[5]))
	}
	checkChain(t, db)
	if _, err := db.Block(fork[0].Hash()); err != nil {
		t.Fatalf("fork block lost on reopen: %v", err)
	}
	// The fork block is back in the volatile tree: a child extends it.
	res := mustAdd(t, db, f.chain(fork[0].Header, 2)...)
	if !res.Adopted || res.RolledBack != 2 {
		t.Fatalf("extending the reloaded fork: %+v", res)
	}

	// A database of another network is refused.
	db.Close()
	other := testOptions(k, genesis, fs)
	other.Network.Genesis[0] = 1
	if _, err := Open("db", other); !errors.Is(err, pebblestore.ErrOtherNetwork) {
		t.Fatalf("Open under another genesis: %v", err)
	}
}

func TestReopenWithSmallerK(t *testing.T) {
	fs := vfs.NewMem()
	genesis := testGenesis(2)
	db := mustOpen(t, "db", testOptions(5, genesis, fs))
	a := newForger().chain(nil, 6)
	mustAdd(t, db, a...)
	db.Close()
	db = mustOpen(t, "db", testOptions(2, genesis, fs))
	defer db.Close()
	if db.ImmutableTip() != tipOf(a[3]) {
		t.Fatalf("immutable tip %s after reopening with k=2", db.ImmutableTip())
	}
	checkChain(t, db)
}

// TestTxsOnChainCountsWhatWasApplied: the count of txs on chain is what
// ApplyBlock reported for each block, not the length of its body (a block
// carrying a certificate applies a closure it does not contain); it follows
// a fork switch and the immutable tip's flushes, and a reopened database
// has it at once.
func TestTxsOnChainCountsWhatWasApplied(t *testing.T) {
	const k, closure = 3, 100
	fs := vfs.NewMem()
	opts := testOptions(k, testGenesis(2), fs)
	opts.ApplyBlock = func(u ledger.UTxO, blk *block.Block, parent *block.Header, reapply bool) (*ledger.Diff, error) {
		d, err := testApply(nil)(u, blk, parent, reapply)
		if err == nil {
			d.Txs += closure // as if it applied a closure of that many txs
		}
		return d, err
	}
	want := func(chain []*block.Block) uint64 { return txsIn(chain) + closure*uint64(len(chain)) }
	f := newForger()
	coin := uint64(0)
	grow := func(parent *block.Header, n int) []*block.Block {
		var out []*block.Block
		for i := range n {
			var txs []testTx
			for range i % 3 {
				coin++ // outputs named by the tx's hash: every tx differs
				txs = append(txs, testTx{Outs: []testOut{{Addr: []byte("a"), Coin: coin}}})
			}
			out = append(out, f.next(parent, 1, txs...))
			parent = out[len(out)-1].Header
		}
		return out
	}

	db := mustOpen(t, "db", opts)
	if got := db.TxsOnChain(); got != 0 {
		t.Fatalf("%d txs on an empty chain", got)
	}
	a := grow(nil, 5)
	mustAdd(t, db, a...)
	if got := db.TxsOnChain(); got != want(a) {
		t.Fatalf("%d txs on chain A, want %d", got, want(a))
	}
	b := grow(a[2].Header, 4) // longer than A from #4: rolls back A4, A5
	mustAdd(t, db, b...)
	chain := append(a[:3:3], b...)
	if got := db.TxsOnChain(); got != want(chain) || db.Tip() != tipOf(b[3]) {
		t.Fatalf("%d txs on chain after the switch to %s, want %d", got, db.Tip(), want(chain))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpen(t, "db", opts)
	defer db.Close()
	if got := db.TxsOnChain(); got != want(chain) || db.ImmutableTip().BlockNumber == 0 {
		t.Fatalf("%d txs on chain after a reopen (immutable tip %s), want %d", got, db.ImmutableTip(), want(chain))
	}
}

// TestCertRBsOnChainSurviveRestart: the count of CertRBs on chain follows
// a fork switch and the immutable tip, a reopened database has it at once,
// and one written before the count was kept gets it counted at open.
func TestCertRBsOnChainSurviveRestart(t *testing.T) {
	const k = 3
	fs := vfs.NewMem()
	opts := testOptions(k, testGenesis(2), fs)
	f := newForger()
	f.certifies = func(number uint64) bool { return number%2 == 0 }
	certRBs := func(chain []*block.Block) (n uint64) {
		for _, b := range chain {
			if b.Header.LeiosCertified {
				n++
			}
		}
		return n
	}
	db := mustOpen(t, "db", opts)
	a := f.chain(nil, 5)
	mustAdd(t, db, a...)
	if got := db.CertRBsOnChain(); got != 2 {
		t.Fatalf("%d CertRBs on chain A, want 2", got)
	}
	f.certifies = func(uint64) bool { return true }
	b := f.chain(a[2].Header, 5) // longer than A from #4: rolls back A4, A5
	mustAdd(t, db, b...)
	chain := append(a[:3:3], b...)
	if got, want := db.CertRBsOnChain(), certRBs(chain); got != want || db.ImmutableTip().BlockNumber < 4 {
		t.Fatalf("%d CertRBs after the switch (immutable tip %s), want %d", got, db.ImmutableTip(), want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpen(t, "db", opts)
	if got, want := db.CertRBsOnChain(), certRBs(chain); got != want {
		t.Fatalf("%d CertRBs after a reopen, want %d", got, want)
	}
	// A database from before the count: the marker is gone.
	batch := db.store.NewBatch()
	batch.Delete(keyImmutableCertRBs, nil)
	if err := db.store.Commit(batch, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	batch.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, "db", opts)
	defer db.Close()
	if got, want := db.CertRBsOnChain(), certRBs(chain); got != want {
		t.Fatalf("%d CertRBs after a reopen without the marker, want %d", got, want)
	}
}

func TestViewHeldAcrossFlush(t *testing.T) {
	const k = 2
	genesis := testGenesis(3)
	db := mustOpen(t, "db", testOptions(k, genesis, vfs.NewMem()))
	defer db.Close()
	f := newForger()
	g0 := ledger.TxIn{TxID: [32]byte{0xee}, Index: 0}
	spend := testTx{Spend: []ledger.TxIn{g0}, Outs: []testOut{{Addr: []byte("x"), Coin: 1}}}
	b1 := f.next(nil, 1, spend)
	mustAdd(t, db, b1)
	view, err := db.LedgerAt(b1.Point())
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	atOrigin, err := db.LedgerAt(block.Origin)
	if err != nil {
		t.Fatal(err)
	}
	defer atOrigin.Close()
	// Four more blocks: b1's diff is flushed, then b1 itself is final.
	mustAdd(t, db, f.chain(b1.Header, 4)...)
	if db.ImmutableTip().BlockNumber != 3 {
		t.Fatalf("immutable tip %s", db.ImmutableTip())
	}
	created := ledger.TxIn{TxID: block.HashBytes(encodeTx(spend))}
	universe := map[ledger.TxIn]struct{}{g0: {}, created: {}}
	checkLedger(t, atOrigin, genesis, universe)
	checkLedger(t, view, replay(t, genesis, []*block.Block{b1}), universe)
}

func TestFollowerNextWaits(t *testing.T) {
	db := mustOpen(t, "db", testOptions(3, testGenesis(1), vfs.NewMem()))
	defer db.Close()
	f := newForger()
	follower, err := db.NewFollower(block.Origin)
	if err != nil {
		t.Fatal(err)
	}
	b := f.next(nil, 1)
	got := make(chan block.ChainUpdate, 1)
	go func() {
		u, err := follower.Next(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	time.Sleep(10 * time.Millisecond)
	mustAdd(t, db, b)
	if u := <-got; u.Kind != block.RollForward || u.Header.Hash() != b.Hash() {
		t.Fatalf("Next = %+v", u)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := follower.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next at the tip = %v, want the context's error", err)
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		follower.Close()
	}()
	if _, err := follower.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next on a closed follower = %v", err)
	}
	if _, err := db.NewFollower(block.Point{Slot: 1, Hash: block.Hash{3}}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("NewFollower off the chain = %v", err)
	}
}

// TestConcurrentUse runs adders of the same blocks, followers and ledger
// readers together, for the race detector.
func TestConcurrentUse(t *testing.T) {
	const k = 8
	genesis := testGenesis(2)
	db := mustOpen(t, "db", testOptions(k, genesis, vfs.NewMem()))
	defer db.Close()
	f := newForger()
	a := f.chain(nil, 12)
	b := f.chain(a[5].Header, 8) // wins from #14 on

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for _, blk := range append(append([]*block.Block{}, a...), b...) {
				if _, err := db.AddBlock(blk); err != nil {
					t.Error(err)
				}
			}
		})
	}
	readers := sync.WaitGroup{}
	for range 2 {
		readers.Go(func() {
			follower, err := db.NewFollower(block.Origin)
			if err != nil {
				t.Error(err)
				return
			}
			defer follower.Close()
			for ctx.Err() == nil {
				view, _ := db.TipLedger()
				if _, _, err := view.Lookup(ledger.TxIn{TxID: [32]byte{0xee}}); err != nil {
					t.Error(err)
				}
				view.Close()
				if _, err := follower.Next(ctx); err != nil && ctx.Err() == nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	cancel()
	readers.Wait()
	if db.Tip() != tipOf(b[7]) {
		t.Fatalf("tip %s, want %s", db.Tip(), tipOf(b[7]))
	}
	checkChain(t, db)
}

// TestParkedBlock: a block whose ApplyBlock says ErrNotReady (a CertRB
// waiting for its EB closure) is stored but neither selected nor held
// invalid, also across a reopen; Reselect adopts its chain once it is ready.
func TestParkedBlock(t *testing.T) {
	const k = 4
	fs := vfs.NewMem()
	genesis := testGenesis(2)
	ready := false
	certTx := testTx{Outs: []testOut{{Addr: []byte("cert"), Coin: 1}}}
	opts := testOptions(k, genesis, fs)
	opts.ApplyBlock = func(utxo ledger.UTxO, blk *block.Block, parent *block.Header, reapply bool) (*ledger.Diff, error) {
		if len(blk.Body.Txs) > 0 && string(blk.Body.Txs[0]) == string(encodeTx(certTx)) && !ready {
			return nil, fmt.Errorf("%w: EB closure incomplete", ErrNotReady)
		}
		return testApply(nil)(utxo, blk, parent, reapply)
	}
	db := mustOpen(t, "db", opts)
	f := newForger()
	a := f.chain(nil, 4)
	p3 := f.next(a[1].Header, 3, certTx)
	p4 := f.next(p3.Header, 1)
	p5 := f.next(p4.Header, 1)
	mustAdd(t, db, a[:3]...)
	mustAdd(t, db, p3)
	if res := mustAdd(t, db, p4); res.Adopted || db.Tip() != tipOf(a[2]) {
		t.Fatalf("a chain through a parked block was adopted: %+v", res)
	}
	mustAdd(t, db, a[3])
	if res := mustAdd(t, db, p5); res.Adopted {
		t.Fatalf("adopted %+v while parked", res)
	}
	if res, err := db.Reselect(); err != nil || res.Adopted {
		t.Fatalf("Reselect while not ready: %+v %v", res, err)
	}

	ready = true
	res, err := db.Reselect()
	if err != nil || !res.Adopted || res.Tip != tipOf(p5) || res.RolledBack != 2 {
		t.Fatalf("Reselect when ready = %+v %v; want tip P5, 2 rolled back", res, err)
	}
	checkChain(t, db)
	db.Close()

	// Reopened while the closure is missing again: the selection falls back
	// to the longest chain that can be applied, and comes back on Reselect.
	ready = false
	db = mustOpen(t, "db", opts)
	defer db.Close()
	if db.Tip() != tipOf(a[3]) {
		t.Fatalf("reopened with the parked block not ready at %s, want A4", db.Tip())
	}
	// The immutable tip never goes back: it stays where it was, A1.
	if db.ImmutableTip() != tipOf(a[0]) {
		t.Fatalf("immutable tip %s, want A1", db.ImmutableTip())
	}
	ready = true
	if res, err := db.Reselect(); err != nil || res.Tip != tipOf(p5) || res.RolledBack != 2 {
		t.Fatalf("Reselect after reopen = %+v %v", res, err)
	}
	checkChain(t, db)
}
