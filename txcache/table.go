package txcache

import (
	"encoding/binary"
	"math/bits"
	"runtime"
	"sync/atomic"

	"github.com/leiosnode/leiosnode/block"
)

// table is the tx map: open addressing, linear probing, backward-shift
// deletion (no tombstones). Each slot holds the 32-byte key inline and one
// state word (see packState); a zero state word is an empty slot.
//
// Beside the slots, a tag array keeps one byte per slot: 0 for an empty
// slot, else 0x80 | 7 bits of the key's hash. A reader compares the eight
// tags from its home in one word before touching any slot (scanTags): most
// misses end there, and most hits compare a single key.
//
// Homes lie in [0, n); a probe walks at most maxProbe slots forward from its
// home, into a tail of maxProbe-1 slots past n, and never wraps around. So
// every distance is a plain difference and every probe window a subslice.
//
// Invariants (checked by the tests after every step):
//   - used is the number of slots with a non-zero state word;
//   - no key occurs twice;
//   - a key at position p with home h has p-h < maxProbe and every slot of
//     h..p occupied: a probe from h that meets an empty slot, or walks
//     maxProbe slots, has proved the key absent;
//   - the home in a state word is the key's home;
//   - a slot's tag is 0 if it is empty, else its key's tag.
//
// Concurrency: one writer at a time (the Cache's writeMu), any number of
// readers, no reader lock. Every slot and tag word is accessed atomically.
// Writes that only fill an empty slot (key words first, then the state word,
// the tag last) or replace a state word are safe for readers as they are: a
// reader sees the old or the new word, both true. A deletion moves entries
// (and their tags), so a reader could see a key between two places; it runs
// inside a seqlock on the stripes of slots it walks (odd while moving), and
// a reader re-validates the stripes of its probe window and retries on a
// change. Readers never write shared memory,
// so they scale.
type table struct {
	slots    []slot // n + maxProbe - 1
	n        uint64 // home slots
	maxProbe uint64 // ≤ stripeSize
	seed     uint64 // xxh3 seed, from crypto/rand
	secret   secret // the seed folded into xxh3's key (hash.go)
	homeHook func(block.Hash) uint64

	// tags[i>>3] holds the tags of slots i&^7 .. i|7, slot i in byte i&7
	// (little-endian), and a zero word past the end, so that the eight tags
	// from any home are two loads. Written only by the writer.
	tags []atomic.Uint64
	// inWindow masks the tag bytes a probe may use: all eight, or the first
	// maxProbe if the probe bound is smaller (tiny tables), so that a probe
	// reads no tag outside the stripes it validates.
	inWindow uint64

	// stripes[i>>stripeShift] is the sequence word of slot i: odd while a
	// deletion walks its stripe. Written only by the writer.
	stripes []atomic.Uint64

	used    atomic.Int64  // occupied slots; written only by the writer
	refused atomic.Uint64 // inserts that found no room (false misses)
}

type slot struct {
	state atomic.Uint64
	key   [4]atomic.Uint64
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

// holds compares all four words without branching: most compares fail.
func (s *slot) holds(k *key) bool {
	return (s.key[0].Load()^k[0])|(s.key[1].Load()^k[1])|
		(s.key[2].Load()^k[2])|(s.key[3].Load()^k[3]) == 0
}

func (s *slot) loadKey() key {
	return key{s.key[0].Load(), s.key[1].Load(), s.key[2].Load(), s.key[3].Load()}
}

func (s *slot) storeKey(k *key) {
	for i, w := range k {
		s.key[i].Store(w)
	}
}

// Stripes are 4096 slots (160 KiB); a probe window is never longer than a
// stripe, so it lies in at most two.
const (
	stripeShift = 12
	stripeSize  = 1 << stripeShift
	// defaultMaxProbe bounds every probe. At the load factors the defaults
	// give, a random key is never displaced this far; a flood of colliding
	// keys (should the seed leak) gets refused inserts — false misses —
	// rather than long scans.
	defaultMaxProbe = 1024
)

func newTable(n, maxProbe, seed uint64, homeHook func(block.Hash) uint64) *table {
	if maxProbe == 0 || maxProbe > defaultMaxProbe {
		maxProbe = defaultMaxProbe
	}
	maxProbe = min(maxProbe, n)
	slots := newSlots(n + maxProbe - 1)
	inWindow := ^uint64(0)
	if maxProbe < 8 {
		inWindow = 1<<(8*maxProbe) - 1
	}
	return &table{
		slots:    slots,
		n:        n,
		maxProbe: maxProbe,
		seed:     seed,
		secret:   newSecret(seed),
		homeHook: homeHook,
		tags:     newTags(len(slots)>>3 + 2),
		inWindow: inWindow,
		stripes:  make([]atomic.Uint64, (len(slots)-1)>>stripeShift+1),
	}
}

// tagBytes is the memory of the tags of a table of slots: a byte a slot, in
// whole words, and the zero word past the end.
func tagBytes(slots int) int { return (slots>>3 + 2) * 8 }

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
func (t *table) start(k *key) (home, tag uint64) {
	x := hash32(k, &t.secret)
	if t.homeHook != nil {
		return t.homeHook(k.hash()) % t.n, tagOf(x)
	}
	home, _ = bits.Mul64(x, t.n)
	return home, tagOf(x)
}

// tagOf is the tag of a key with hash x: never 0, which marks an empty slot.
func tagOf(x uint64) uint64 { return x&0x7f | 0x80 }

// window is the probe window of a home: the only slots its keys can be in.
func (t *table) window(home uint64) []slot {
	return t.slots[home : home+t.maxProbe]
}

// Byte lanes of a tag word.
const (
	lanesLow  = 0x0101010101010101
	lanesHigh = 0x8080808080808080
	lanesRest = 0x7f7f7f7f7f7f7f7f // ^lanesHigh
)

// tagsFrom returns the tags of slots home .. home+7, slot home in the low
// byte: two aligned loads funnelled together.
func (t *table) tagsFrom(home uint64) uint64 {
	i, shift := home>>3, (home&7)*8
	// A shift by 64 gives 0 in Go, so shift 0 needs no branch.
	return t.tags[i].Load()>>shift | t.tags[i+1].Load()<<(64-shift)
}

// setTag sets the tag of slot pos. Only the writer calls it.
func (t *table) setTag(pos, tag uint64) {
	w := &t.tags[pos>>3]
	shift := (pos & 7) * 8
	w.Store(w.Load()&^(0xff<<shift) | tag<<shift)
}

func (t *table) tagAt(pos uint64) uint64 { return t.tags[pos>>3].Load() >> ((pos & 7) * 8) & 0xff }

// ---- reader side ----

// lookup returns k's state word, or 0 if absent. Safe alongside the writer.
func (t *table) lookup(k *key, home uint64) uint64 {
	_, tag := t.start(k)
	return t.lookupTagged(k, home, tag)
}

// lookupTagged is lookup with k's tag already computed.
func (t *table) lookupTagged(k *key, home, tag uint64) uint64 {
	for {
		if w, ok := t.tryLookupTagged(k, home, tag); ok {
			return w
		}
		// A deletion walked the window meanwhile: let it finish, then retry.
		runtime.Gosched()
	}
}

// tryLookup probes once, inside the seqlock of the (one or two) stripes of
// the probe window; ok is false if a deletion overlapped it.
func (t *table) tryLookup(k *key, home uint64) (w uint64, ok bool) {
	_, tag := t.start(k)
	return t.tryLookupTagged(k, home, tag)
}

// tryLookupTagged is tryLookup with k's tag already computed. It first
// matches the tag against the eight tags from home, all at once: the key can
// only be in a slot with its tag before the first empty slot. Most probes end
// there — a miss with no slot read, a hit with one key compared. Eight full
// slots without k's tag, or a tag that belongs to another key, leave it to
// walk. (One function, not two: the compiler inlines neither half.)
func (t *table) tryLookupTagged(k *key, home, tag uint64) (w uint64, ok bool) {
	seqs := t.windowSeqs(home)
	candidates, empty := t.scanTags(home, tag)
	switch {
	case candidates != 0:
		s := &t.slots[home+lane(candidates)]
		if w = s.state.Load(); w == 0 || !s.holds(k) {
			w = t.walk(k, home) // another key with k's tag
		}
	case empty != 0:
		w = 0
	default:
		w = t.walk(k, home)
	}
	return w, t.sameSeqs(home, seqs)
}

// windowSeqs reads the sequence words of the (one or two) stripes of a
// home's probe window, before the probe reads any tag or slot.
func (t *table) windowSeqs(home uint64) [2]uint64 {
	return [2]uint64{t.stripes[home>>stripeShift].Load(), t.stripes[(home+t.maxProbe-1)>>stripeShift].Load()}
}

// sameSeqs reports whether no deletion walked the window since windowSeqs
// read seqs: both were even and are unchanged, so what the probe read in
// between was there all along.
func (t *table) sameSeqs(home uint64, seqs [2]uint64) bool {
	return (seqs[0]|seqs[1])&1 == 0 && t.windowSeqs(home) == seqs
}

// scanTags matches tag against the eight tags from home at once. In its
// results the high bit of lane i stands for slot home+i: candidates are the
// slots with the tag before the first empty slot — the only ones that can
// hold a key with that tag — and empty the empty slots.
func (t *table) scanTags(home, tag uint64) (candidates, empty uint64) {
	tags := t.tagsFrom(home)
	empty = ^tags & lanesHigh & t.inWindow // empty slots have the high bit clear
	// Lanes where tags equals tag are zero in x; their high bit ends up set
	// in match, with no false positives (no carries cross lanes).
	x := tags ^ tag*lanesLow
	match := ^((x&lanesRest + lanesRest) | x | lanesRest) & t.inWindow
	beforeEmpty := uint64(1)<<bits.TrailingZeros64(empty) - 1 // all ones if no empty
	return match & beforeEmpty, empty
}

// lane is the offset from home of the first lane set in a scanTags result.
func lane(lanes uint64) uint64 { return uint64(bits.TrailingZeros64(lanes) >> 3) }

// walk probes slot by slot, comparing whole keys.
func (t *table) walk(k *key, home uint64) (w uint64) {
	window := t.window(home)
	for i := range window {
		s := &window[i]
		if w = s.state.Load(); w == 0 || s.holds(k) {
			return w
		}
	}
	return 0
}

// ---- writer side (the caller holds the Cache's writeMu) ----

// findTagged is find with k's tag, which settles most probes from the tags
// (see tryLookupTagged) and walks only when they do not.
func (t *table) findTagged(k *key, home, tag uint64) (pos uint64, found, room bool) {
	candidates, empty := t.scanTags(home, tag)
	switch {
	case candidates != 0:
		if pos = home + lane(candidates); t.slots[pos].holds(k) {
			return pos, true, true
		}
	case empty != 0:
		return home + lane(empty), false, true
	}
	return t.find(k, home)
}

// find probes for k slot by slot: its position if present, else the first
// empty slot of its window (room false if there is none).
func (t *table) find(k *key, home uint64) (pos uint64, found, room bool) {
	window := t.window(home)
	for i := range window {
		s := &window[i]
		if s.state.Load() == 0 {
			return home + uint64(i), false, true
		}
		if s.holds(k) {
			return home + uint64(i), true, true
		}
	}
	return 0, false, false
}

// addRef counts one more inserted body naming k, adding k as
// TxNotYetInserted if absent. It returns k's state, or ok false if the table
// had no room (or the count would overflow): k is then not counted.
func (t *table) addRef(k *key, home uint64) (kind TxState, ok bool) {
	_, tag := t.start(k)
	return t.addRefTagged(k, home, tag)
}

// addRefTagged is addRef with k's tag already computed.
func (t *table) addRefTagged(k *key, home, tag uint64) (kind TxState, ok bool) {
	pos, found, room := t.findTagged(k, home, tag)
	switch {
	case found:
		s := &t.slots[pos]
		w := s.state.Load()
		if stateRefs(w) == maxRefs {
			t.refused.Add(1)
			return TxAbsent, false
		}
		s.state.Store(w + refOne)
		return stateKind(w), true
	case room:
		s := &t.slots[pos]
		s.storeKey(k)
		s.state.Store(packState(TxNotYetInserted, 1, home)) // publishes the key
		t.setTag(pos, tag)                                  // publishes it to the tag probe
		t.used.Add(1)
		return TxNotYetInserted, true
	default:
		t.refused.Add(1)
		return TxAbsent, false
	}
}

// release drops one count of k, deleting it at zero. k must have been
// counted by addRef; an absent k is ignored.
func (t *table) release(k *key, home uint64) {
	_, tag := t.start(k)
	t.releaseTagged(k, home, tag)
}

// releaseTagged is release with k's tag already computed.
func (t *table) releaseTagged(k *key, home, tag uint64) {
	pos, found, _ := t.findTagged(k, home, tag)
	if !found {
		return
	}
	s := &t.slots[pos]
	w := s.state.Load()
	if stateRefs(w) > 1 {
		s.state.Store(w - refOne)
		return
	}
	t.delete(pos)
}

// mark advances k to state to (TxInserted or TxValidated), never backwards.
func (t *table) mark(k *key, home, tag uint64, to TxState) MarkResult {
	pos, found, _ := t.findTagged(k, home, tag)
	if !found {
		return MarkExtra
	}
	s := &t.slots[pos]
	w := s.state.Load()
	if stateKind(w) >= to {
		return MarkAlready
	}
	s.state.Store(w&^kindMask | uint64(to))
	return MarkWanted
}

// delete empties slot hole and shifts later entries of its cluster back, so
// no probe path has a gap: an entry at j moves into the hole when its home
// is at or before the hole.
func (t *table) delete(hole uint64) {
	first := hole >> stripeShift
	last := first
	t.stripes[first].Add(1) // odd: readers of this stripe will retry
	t.slots[hole].state.Store(0)
	t.setTag(hole, 0)
	for j := hole + 1; j < uint64(len(t.slots)); j++ {
		w := t.slots[j].state.Load()
		if w == 0 {
			break
		}
		if st := j >> stripeShift; st != last {
			last = st
			t.stripes[st].Add(1)
		}
		if stateHome(w) > hole {
			continue // its home is past the hole: it stays
		}
		k := t.slots[j].loadKey()
		t.slots[hole].storeKey(&k)
		t.slots[hole].state.Store(w)
		t.setTag(hole, t.tagAt(j))
		t.slots[j].state.Store(0)
		t.setTag(j, 0)
		hole = j
	}
	for st := first; st <= last; st++ {
		t.stripes[st].Add(1) // even again
	}
	t.used.Add(-1)
}
