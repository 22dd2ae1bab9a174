package txcache

import (
	"encoding/binary"
	"math/bits"
	"runtime"
	"sync/atomic"

	"github.com/leiosnode/leiosnode/block"
)

// table is the tx map: open addressing, linear probing, backward-shift
// deletion (no tombstones). Slot i is two parts in two arrays: its state
// word meta[i] (see packState; 0 for an empty slot), which carries a tag
// of 7 more bits of the key's hash, and its 32-byte key keys[i].
//
// The split is what a cold lookup pays for: sixteen state words share a
// cache line, so the line at a key's home settles most misses (an empty
// slot before any tag match) and names the one key to compare; the keys,
// 32 bytes aligned, two to a line, never straddle one. A miss costs one
// line, a hit two, and the second only once the first has named it.
//
// Homes lie in [0, n); a probe walks at most maxProbe slots forward from its
// home, into a tail of maxProbe-1 slots past n, and never wraps around. So
// every distance is a plain difference and every probe window a subslice.
//
// Invariants (checked by the tests after every step):
//   - occupied is the number of slots with a non-zero state word;
//   - no key occurs twice;
//   - a key at position p with home h has p-h < maxProbe and every slot of
//     h..p occupied: a probe from h that meets an empty slot, or walks
//     maxProbe slots, has proved the key absent;
//   - the tag in a state word is the key's tag.
//
// Concurrency: one writer at a time (the Cache's writeMu), any number of
// readers, no reader lock. Every key and state word is accessed
// atomically. Writes that only fill an empty slot (key words first, then
// the state word) or replace a state word are safe for readers as they
// are: a reader sees the old or the new word, both true. A deletion moves
// entries, so a reader could see a key between two places; it runs inside
// a seqlock on the stripes of slots it walks (odd while moving), and a
// reader re-validates the stripes of what it read and retries on a change:
// those of its probe window (one or two), or, for a batch's probe settled
// within the line at its home, that line's one stripe. Readers never write
// shared memory, so they scale.
type table struct {
	meta     []atomic.Uint32    // n + maxProbe - 1 state words, 64-byte aligned
	keys     [][4]atomic.Uint64 // as many keys, 64-byte aligned
	n        uint64             // home slots
	maxProbe uint64             // ≤ stripeSize
	seed     uint64             // xxh3 seed, from crypto/rand
	secret   secret             // the seed folded into xxh3's key (hash.go)
	homeHook func(block.Hash) uint64

	// stripes[i>>stripeShift] is the sequence word of slot i: odd while a
	// deletion walks its stripe. Written only by the writer.
	stripes []atomic.Uint64

	// occupied counts the occupied slots; the writer's own. used is its
	// value after the writer's last batch, for Stats: one store a batch,
	// not a locked add a key.
	occupied int64
	used     atomic.Int64
	refused  atomic.Uint64 // inserts that found no room (false misses)
}

// key is a tx hash as the four little-endian words a slot stores.
type key [4]uint64

func keyOf(h *block.Hash) key {
	return key{
		binary.LittleEndian.Uint64(h[0:]),
		binary.LittleEndian.Uint64(h[8:]),
		binary.LittleEndian.Uint64(h[16:]),
		binary.LittleEndian.Uint64(h[24:]),
	}
}

func (k *key) hash() block.Hash {
	var h block.Hash
	for i, w := range k {
		binary.LittleEndian.PutUint64(h[8*i:], w)
	}
	return h
}

// holds reports whether slot pos holds k, comparing all four words without
// branching: most compares fail.
func (t *table) holds(pos uint64, k *key) bool {
	s := &t.keys[pos]
	return (s[0].Load()^k[0])|(s[1].Load()^k[1])|(s[2].Load()^k[2])|(s[3].Load()^k[3]) == 0
}

func (t *table) loadKey(pos uint64) key {
	s := &t.keys[pos]
	return key{s[0].Load(), s[1].Load(), s[2].Load(), s[3].Load()}
}

func (t *table) storeKey(pos uint64, k *key) {
	s := &t.keys[pos]
	for i, w := range k {
		s[i].Store(w)
	}
}

// Stripes are 4096 slots (144 KiB); a probe window is never longer than a
// stripe, so it lies in at most two.
const (
	stripeShift = 12
	stripeSize  = 1 << stripeShift
	// defaultMaxProbe bounds every probe. At the load factors the defaults
	// give, a random key is never displaced this far; a flood of colliding
	// keys (should the seed leak) gets refused inserts — false misses —
	// rather than long scans.
	defaultMaxProbe = 1024
	// metaLine is how many state words share a cache line.
	metaLine = cacheLine / 4
)

func newTable(n, maxProbe, seed uint64, homeHook func(block.Hash) uint64) *table {
	if maxProbe == 0 || maxProbe > defaultMaxProbe {
		maxProbe = defaultMaxProbe
	}
	maxProbe = min(maxProbe, n)
	slots := n + maxProbe - 1
	return &table{
		meta:     newMeta(slots),
		keys:     newKeys(slots),
		n:        n,
		maxProbe: maxProbe,
		seed:     seed,
		secret:   newSecret(seed),
		homeHook: homeHook,
		stripes:  make([]atomic.Uint64, (slots-1)>>stripeShift+1),
	}
}

// home is the slot a key's probe starts at.
func (t *table) home(h *block.Hash) uint64 {
	k := keyOf(h)
	home, _ := t.start(&k)
	return home
}

// start is where a key's probe starts, from one xxh3 of the key under the
// secret seed: its home, the hash reduced to [0, n) by multiply-shift (no
// power-of-two size needed, and it uses the hash's high bits), and its tag,
// from the hash's low bits.
func (t *table) start(k *key) (home uint64, tag uint32) {
	x := hash32(k, &t.secret)
	if t.homeHook != nil {
		return t.homeHook(k.hash()) % t.n, tagOf(x)
	}
	home, _ = bits.Mul64(x, t.n)
	return home, tagOf(x)
}

// tagOf is the tag of a key with hash x: never 0, so that an occupied
// slot's state word is never 0.
func tagOf(x uint64) uint32 { return uint32(x)&0x7f | 0x80 }

// windowEnd is the last slot of a home's probe window: the only slots its
// keys can be in.
func (t *table) windowEnd(home uint64) uint64 { return home + t.maxProbe - 1 }

// probe walks k's window from home: the slot holding k (found), else the
// first empty slot (room), else neither. Only slots with k's tag have
// their key compared.
func (t *table) probe(k *key, home uint64, tag uint32) (pos uint64, found, room bool) {
	for pos = home; pos <= t.windowEnd(home); pos++ {
		w := t.meta[pos].Load()
		if w == 0 {
			return pos, false, true
		}
		if stateTag(w) == tag && t.holds(pos, k) {
			return pos, true, true
		}
	}
	return 0, false, false
}

// ---- reader side ----

// lookup returns k's state word, or 0 if absent. Safe alongside the writer.
func (t *table) lookup(k *key, home uint64, tag uint32) uint32 {
	for {
		if w, ok := t.tryLookup(k, home, tag); ok {
			return w
		}
		// A deletion walked the window meanwhile: let it finish, then retry.
		runtime.Gosched()
	}
}

// tryLookup probes once, inside the seqlock of the (one or two) stripes of
// the probe window; ok is false if a deletion overlapped it.
func (t *table) tryLookup(k *key, home uint64, tag uint32) (w uint32, ok bool) {
	seqs := t.windowSeqs(home)
	if pos, found, _ := t.probe(k, home, tag); found {
		w = t.meta[pos].Load()
	}
	return w, t.sameSeqs(home, seqs)
}

// windowSeqs reads the sequence words of the (one or two) stripes of a
// home's probe window, before the probe reads any slot.
func (t *table) windowSeqs(home uint64) [2]uint64 {
	return [2]uint64{t.stripes[home>>stripeShift].Load(), t.stripes[t.windowEnd(home)>>stripeShift].Load()}
}

// sameSeqs reports whether no deletion walked the window since windowSeqs
// read seqs: both were even and are unchanged, so what the probe read in
// between was there all along.
func (t *table) sameSeqs(home uint64, seqs [2]uint64) bool {
	return (seqs[0]|seqs[1])&1 == 0 && t.windowSeqs(home) == seqs
}

// ---- writer side (the caller holds the Cache's writeMu) ----

// addRef counts one more inserted body naming k, adding k as
// TxNotYetInserted if absent. It returns k's state, or ok false if the table
// had no room (or the count would overflow): k is then not counted.
func (t *table) addRef(k *key, home uint64, tag uint32) (kind TxState, ok bool) {
	pos, found, room := t.probe(k, home, tag)
	switch {
	case found:
		w := t.meta[pos].Load()
		if stateRefs(w) == maxRefs {
			t.refused.Add(1)
			return TxAbsent, false
		}
		t.meta[pos].Store(w + refOne)
		return stateKind(w), true
	case room:
		t.storeKey(pos, k)
		t.meta[pos].Store(packState(TxNotYetInserted, 1, tag)) // publishes the key
		t.occupied++
		return TxNotYetInserted, true
	default:
		t.refused.Add(1)
		return TxAbsent, false
	}
}

// release drops one count of k, deleting it at zero. k must have been
// counted by addRef; an absent k is ignored.
func (t *table) release(k *key, home uint64, tag uint32) {
	pos, found, _ := t.probe(k, home, tag)
	if !found {
		return
	}
	w := t.meta[pos].Load()
	if stateRefs(w) > 1 {
		t.meta[pos].Store(w - refOne)
		return
	}
	t.delete(pos)
}

// mark advances k to state to (TxInserted or TxValidated), never backwards.
func (t *table) mark(k *key, home uint64, tag uint32, to TxState) MarkResult {
	pos, found, _ := t.probe(k, home, tag)
	if !found {
		return MarkExtra
	}
	w := t.meta[pos].Load()
	if stateKind(w) >= to {
		return MarkAlready
	}
	t.meta[pos].Store(w&^kindMask | uint32(to))
	return MarkWanted
}

// delete empties slot hole and shifts later entries of its cluster back, so
// no probe path has a gap: an entry at j moves into the hole when its home
// (its key hashed again: slots do not store homes) is at or before the
// hole.
func (t *table) delete(hole uint64) {
	first := hole >> stripeShift
	last := first
	t.stripes[first].Add(1) // odd: readers of this stripe will retry
	t.meta[hole].Store(0)
	for j := hole + 1; j < uint64(len(t.meta)); j++ {
		w := t.meta[j].Load()
		if w == 0 {
			break
		}
		if st := j >> stripeShift; st != last {
			last = st
			t.stripes[st].Add(1)
		}
		k := t.loadKey(j)
		if home, _ := t.start(&k); home > hole {
			continue // its home is past the hole: it stays
		}
		t.storeKey(hole, &k)
		t.meta[hole].Store(w)
		t.meta[j].Store(0)
		hole = j
	}
	for st := first; st <= last; st++ {
		t.stripes[st].Add(1) // even again
	}
	t.occupied--
}
