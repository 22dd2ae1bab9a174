package txcache

import (
	"bytes"

	"github.com/leiosnode/leiosnode/block"
)

// fataler is what the checkers need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkTable verifies the table's invariants (see table): occupancy count,
// no duplicate key, tags (the key's), no gap on any probe path, probe
// distance within bound, every stripe even (no deletion in progress).
// It returns each key's reference count. The caller must exclude writers.
func checkTable(t fataler, tb *table) map[block.Hash]uint64 {
	t.Helper()
	refs := make(map[block.Hash]uint64)
	for p := range uint64(len(tb.meta)) {
		w := tb.meta[p].Load()
		if w == 0 {
			continue
		}
		k := tb.loadKey(p)
		h := k.hash()
		if _, dup := refs[h]; dup {
			t.Fatalf("slot %d: key %s appears twice", p, h.Short())
		}
		if stateKind(w) == TxAbsent || stateRefs(w) == 0 {
			t.Fatalf("slot %d: occupied with state %s, %d refs", p, stateKind(w), stateRefs(w))
		}
		refs[h] = stateRefs(w)
		home, tag := tb.start(&k)
		if got := stateTag(w); got != tag {
			t.Fatalf("slot %d: tag %#x, key's tag is %#x", p, got, tag)
		}
		if p < home || p-home >= tb.maxProbe {
			t.Fatalf("slot %d: outside the probe window of its home %d (bound %d)", p, home, tb.maxProbe)
		}
		for i := home; i < p; i++ {
			if tb.meta[i].Load() == 0 {
				t.Fatalf("slot %d: gap at %d on the path from its home %d", p, i, home)
			}
		}
	}
	if tb.occupied != int64(len(refs)) {
		t.Fatalf("occupied = %d, %d slots occupied", tb.occupied, len(refs))
	}
	for i := range tb.stripes {
		if seq := tb.stripes[i].Load(); seq&1 != 0 {
			t.Fatalf("stripe %d left odd (%d)", i, seq)
		}
	}
	return refs
}

// tag is k's tag.
func (t *table) tag(k *key) uint32 {
	_, tag := t.start(k)
	return tag
}

// checkCache verifies the table and that every reference count matches the
// references that exist. It holds writeMu.
func checkCache(t fataler, c *Cache) {
	t.Helper()
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	refs := checkTable(t, c.txs)
	if used := c.txs.used.Load(); used != c.txs.occupied {
		t.Fatalf("Stats' count %d, %d slots occupied", used, c.txs.occupied)
	}

	if len(c.announcements) > c.maxAnnouncements {
		t.Fatalf("%d announcements held, max %d", len(c.announcements), c.maxAnnouncements)
	}
	annRefs := make(map[block.Hash]int)
	for i, a := range c.announcements {
		if i > 0 && olderThan(c.announcements[i-1], a) >= 0 {
			t.Fatalf("announcements out of order at %d", i)
		}
		if a.Slot < c.floor {
			t.Fatalf("announcement at slot %d held below floor %d", a.Slot, c.floor)
		}
		annRefs[a.EbHash]++
	}
	if len(annRefs) != len(c.bodies) {
		t.Fatalf("%d EBs announced, %d bodies", len(annRefs), len(c.bodies))
	}
	counted := make(map[block.Hash]uint64)
	for eb, b := range c.bodies {
		if b.refs != annRefs[eb] {
			t.Fatalf("body %s: rc %d, %d announcements name it", eb.Short(), b.refs, annRefs[eb])
		}
		if b.state != BodyInserted && len(b.txs) > 0 {
			t.Fatalf("body %s: not inserted but counts %d txs", eb.Short(), len(b.txs))
		}
		for _, h := range b.txs {
			counted[h]++
		}
	}
	if len(counted) != len(refs) {
		t.Fatalf("%d txs counted by bodies, %d in the table", len(counted), len(refs))
	}
	for h, n := range counted {
		if refs[h] != n {
			t.Fatalf("tx %s: rc %d, counted by %d bodies", h.Short(), refs[h], n)
		}
	}
}

// txRefs returns a key's reference count in the table (0 if absent).
func txRefs(c *Cache, h block.Hash) uint64 {
	k := keyOf(&h)
	return stateRefs(c.txs.lookup(&k, c.txs.home(&h), c.txs.tag(&k)))
}

// testHash is a distinct, readable hash for small universes.
func testHash(tag byte, i int) block.Hash {
	var h block.Hash
	h[0], h[1], h[31] = byte(i), tag, byte(i>>8)
	copy(h[2:], bytes.Repeat([]byte{tag ^ byte(i)}, 8))
	return h
}
