package txcache

import (
	"errors"
	"slices"
	"testing"

	"github.com/leiosnode/leiosnode/block"
)

func ebTxs(tag byte, idx ...int) []block.EBTx {
	txs := make([]block.EBTx, len(idx))
	for i, x := range idx {
		txs[i] = block.EBTx{TxHash: testHash(tag, x), Size: 200}
	}
	return txs
}

func hashesOf(txs []block.EBTx) []block.Hash {
	hs := make([]block.Hash, len(txs))
	for i, tx := range txs {
		hs[i] = tx.TxHash
	}
	return hs
}

func TestBodyNeedsAnnouncement(t *testing.T) {
	c := New(Options{TxCapacity: 64})
	eb := testHash('e', 1)
	if _, err := c.InsertBody(eb, ebTxs('t', 1, 2)); !errors.Is(err, ErrNotAnnounced) {
		t.Fatalf("unannounced body: err %v, want ErrNotAnnounced", err)
	}
	if s := c.Stats(); s.Txs != 0 || s.Bodies != 0 {
		t.Fatalf("a refused body left %+v", s)
	}
	checkCache(t, c)
}

// The life of two EBs sharing txs, step by step.
func TestSharedTxsLifecycle(t *testing.T) {
	c := New(Options{TxCapacity: 64})
	ebA, ebB := testHash('e', 1), testHash('e', 2)
	bodyA, bodyB := ebTxs('t', 0, 1, 2, 3), ebTxs('t', 2, 3, 4)

	if !c.InsertAnnouncement(10, testHash('r', 1), ebA) {
		t.Fatal("announcement A refused")
	}
	if state, ok := c.LookupBody(ebA); !ok || state != BodyNotYetInserted {
		t.Fatalf("body A: %s %v", state, ok)
	}
	missing, err := c.InsertBody(ebA, bodyA)
	if err != nil || !slices.Equal(missing, []int{0, 1, 2, 3}) {
		t.Fatalf("InsertBody(A) = %v, %v; want all missing", missing, err)
	}
	if state, _ := c.LookupBody(ebA); state != BodyInserted {
		t.Fatalf("body A: %s after insert", state)
	}

	// Txs 2 and 3 arrive (and 9, which nobody asked for).
	got := c.MarkInserted([]block.Hash{testHash('t', 2), testHash('t', 3), testHash('t', 9)})
	if want := []MarkResult{MarkWanted, MarkWanted, MarkExtra}; !slices.Equal(got, want) {
		t.Fatalf("MarkInserted = %v, want %v", got, want)
	}
	if state, ok := c.LookupTx(testHash('t', 9)); ok || state != TxAbsent {
		t.Fatalf("extra tx held: %s", state)
	}

	// B shares 2 and 3: only 4 is missing.
	c.InsertAnnouncement(11, testHash('r', 2), ebB)
	if missing, _ := c.InsertBody(ebB, bodyB); !slices.Equal(missing, []int{2}) {
		t.Fatalf("InsertBody(B) missing %v, want [2]", missing)
	}
	if refs := txRefs(c, testHash('t', 2)); refs != 2 {
		t.Fatalf("shared tx has rc %d, want 2", refs)
	}
	if missing, _ := c.InsertBody(ebB, bodyB); !slices.Equal(missing, []int{2}) {
		t.Fatalf("re-inserting B: missing %v, want [2]", missing)
	}
	if refs := txRefs(c, testHash('t', 2)); refs != 2 {
		t.Fatalf("re-inserting B changed rc to %d", refs)
	}

	got = c.MarkValidated([]block.Hash{testHash('t', 4), testHash('t', 2)})
	if want := []MarkResult{MarkWanted, MarkWanted}; !slices.Equal(got, want) {
		t.Fatalf("MarkValidated = %v, want %v", got, want)
	}
	got = c.MarkInserted([]block.Hash{testHash('t', 4), testHash('t', 3)})
	if want := []MarkResult{MarkAlready, MarkAlready}; !slices.Equal(got, want) {
		t.Fatalf("MarkInserted after validation = %v, want %v (never backwards)", got, want)
	}

	out := make([]TxState, len(bodyA))
	if held := c.LookupTxs(hashesOf(bodyA), out); held != 2 ||
		!slices.Equal(out, []TxState{TxNotYetInserted, TxNotYetInserted, TxValidated, TxInserted}) {
		t.Fatalf("LookupTxs(A) = %d %v", held, out)
	}
	if missing := c.AppendMissing(nil, bodyA); !slices.Equal(missing, []int{0, 1}) {
		t.Fatalf("AppendMissing(A) = %v, want [0 1]", missing)
	}
	checkCache(t, c)

	// Evicting A releases 0 and 1; 2 and 3 live on in B.
	c.EvictOlderThan(11)
	for i, want := range []TxState{TxAbsent, TxAbsent, TxValidated, TxInserted, TxValidated} {
		if got, _ := c.LookupTx(testHash('t', i)); got != want {
			t.Fatalf("after evicting A, tx %d is %s, want %s", i, got, want)
		}
	}
	if _, ok := c.LookupBody(ebA); ok {
		t.Fatal("body A survived its announcement")
	}
	checkCache(t, c)

	// An announcement below the eviction floor is refused.
	if c.InsertAnnouncement(10, testHash('r', 3), ebA) {
		t.Fatal("announcement below the floor accepted")
	}
	c.EvictOlderThan(100)
	if s := c.Stats(); s != (Stats{TxCapacity: 127, TableBytes: 127 * SlotBytes}) {
		t.Fatalf("after evicting everything: %+v", s)
	}
}

func TestEvictionOrder(t *testing.T) {
	type ann struct {
		slot uint64
		rb   int
	}
	for _, tc := range []struct {
		name   string
		insert []ann
		held   []ann // oldest first
	}{
		{"least slot goes", []ann{{5, 0}, {3, 0}, {7, 0}}, []ann{{5, 0}, {7, 0}}},
		{"then least rb hash", []ann{{5, 2}, {5, 1}, {6, 0}}, []ann{{5, 2}, {6, 0}}},
		{"the newcomer itself if oldest", []ann{{5, 0}, {6, 0}, {1, 0}}, []ann{{5, 0}, {6, 0}}},
		{"a repeat is no new announcement", []ann{{5, 0}, {5, 0}}, []ann{{5, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Options{MaxAnnouncements: 2, TxCapacity: 16})
			for i, a := range tc.insert {
				c.InsertAnnouncement(a.slot, testHash('r', a.rb), testHash('e', i))
			}
			var held []ann
			for _, a := range c.announcements {
				held = append(held, ann{a.Slot, int(a.RbHash[0])})
			}
			if !slices.Equal(held, tc.held) {
				t.Fatalf("held %v, want %v", held, tc.held)
			}
			checkCache(t, c)
		})
	}
}

// An EB announced by two RBs lives until both announcements are gone.
func TestBodyLivesWhileAnnounced(t *testing.T) {
	c := New(Options{MaxAnnouncements: 2, TxCapacity: 16})
	eb := testHash('e', 1)
	c.InsertAnnouncement(1, testHash('r', 1), eb)
	c.InsertAnnouncement(2, testHash('r', 2), eb)
	c.InsertBody(eb, ebTxs('t', 1))
	c.EvictOlderThan(2)
	if state, ok := c.LookupBody(eb); !ok || state != BodyInserted {
		t.Fatalf("body with one announcement left: %s %v", state, ok)
	}
	c.InsertAnnouncement(3, testHash('r', 3), testHash('e', 2))
	c.InsertAnnouncement(4, testHash('r', 4), testHash('e', 3))
	if _, ok := c.LookupBody(eb); ok {
		t.Fatal("body outlived its announcements")
	}
	if state, ok := c.LookupTx(testHash('t', 1)); ok {
		t.Fatalf("tx of an evicted body is %s", state)
	}
	checkCache(t, c)
}

// A full table turns inserts into misses: counted, reported missing, never
// held, and the node goes on.
func TestFullTableMakesMisses(t *testing.T) {
	// One home for all: a window of 4 slots.
	c := New(Options{TxCapacity: 4, homeHook: func(block.Hash) uint64 { return 0 }})
	eb := testHash('e', 1)
	body := ebTxs('t', 0, 1, 2, 3, 4, 5)
	c.InsertAnnouncement(1, testHash('r', 1), eb)
	missing, err := c.InsertBody(eb, body)
	if err != nil || len(missing) != len(body) {
		t.Fatalf("InsertBody into a small table = %v, %v; want all 6 missing", missing, err)
	}
	s := c.Stats()
	if s.Txs != 4 || s.RefusedInserts != 2 {
		t.Fatalf("stats %+v; want 4 txs, 2 refused", s)
	}
	results := c.MarkInserted(hashesOf(body))
	extra := 0
	for i, r := range results {
		state, _ := c.LookupTx(body[i].TxHash)
		switch {
		case r == MarkExtra && state != TxAbsent, r == MarkWanted && state != TxInserted:
			t.Fatalf("tx %d: %s but state %s", i, r, state)
		case r == MarkExtra:
			extra++
		}
	}
	if extra != 2 {
		t.Fatalf("%d refused txs marked, want 2 reported extra", extra)
	}
	if missing := c.AppendMissing(nil, body); len(missing) != 2 {
		t.Fatalf("the two refused txs should stay missing: %v", missing)
	}
	checkCache(t, c)
}
