package txcache

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/leiosnode/leiosnode/block"
)

// A probe of a cold table waits on memory twice: for the tags from its
// home, then for the slot they point at. A batch pays neither wait one key
// at a time. It runs its keys through three stages, a group at a time, each
// stage some groups behind the one before: stage one hashes a group and
// prefetches its tag words; stage two, tagsAhead groups later, scans them
// (in the cache by then) and prefetches the one slot each key's tags point
// at; stage three, slotsAhead groups later still, does the key's work — a
// reader compares the key against its slot, the writer inserts, marks or
// releases it. So the misses of several groups are in flight while the CPU
// works on others, and a reader's miss costs a tag line only.
//
// Readers may scan ahead because they change nothing. The writer's stage
// two only guesses, for its prefetch, where stage three will work: an
// insert may take the slot a later key's scan found empty, so stage three
// probes again, in order, with the lines at hand.
//
// (Groups of 8 to 32 keys, one to four groups apart, measured alike on the
// two-core machine this was tuned on.)
const (
	group      = 16 // keys a stage works on at once
	tagsAhead  = 2  // groups between a group's tag prefetch and its scan
	slotsAhead = 2  // groups between a group's scan and its work
	inFlight   = tagsAhead + slotsAhead + 1
)

// probeGroup is one group of keys on its way through the stages.
type probeGroup struct {
	n           int
	homes, tags [group]uint64
	// Set by scan: what the tags settled for each key, the slot to
	// compare, and the sequence words of its window's stripes read before
	// the tags.
	verdict [group]uint8
	pos     [group]uint64
	seqs    [group][2]uint64
	lines   [2 * group]uintptr // prefetch scratch
}

// What the tags settled for a key.
const (
	tagsMiss      = iota // no slot before the first empty one has its tag
	tagsCandidate        // pos has its tag: compare the key
	tagsWalk             // eight full slots without its tag: walk
)

// stages runs hashes through the stages, calling work with each group in
// order once its lines are prefetched. forInsert makes stage two prefetch,
// for a key the tags do not find, the empty slot an insert would take.
func (t *table) stages(hashes []block.Hash, forInsert bool, work func(base int, pg *probeGroup)) {
	var ring [inFlight]probeGroup
	n := len(hashes)
	count := (n + group - 1) / group
	for g := -(tagsAhead + slotsAhead); g < count; g++ {
		if f := g + tagsAhead + slotsAhead; f < count {
			t.hashAndFetchTags(&ring[f%inFlight], hashes[f*group:min(f*group+group, n)])
		}
		if s := g + slotsAhead; s >= 0 && s < count {
			t.scanAndFetchSlots(&ring[s%inFlight], forInsert)
		}
		if g >= 0 {
			work(g*group, &ring[g%inFlight])
		}
	}
}

// hashAndFetchTags is stage one: homes and tags, and a prefetch of each
// key's tag word. (The eight tags from a home span two words, in two lines
// one time in eight; the second is left to be fetched when scanned.)
func (t *table) hashAndFetchTags(pg *probeGroup, hashes []block.Hash) {
	pg.n = len(hashes)
	for i := range hashes {
		k := keyOf(&hashes[i])
		if t.homeHook != nil {
			pg.homes[i], pg.tags[i] = t.start(&k)
			continue
		}
		x := hash32(&k, &t.secret) // start, inlined
		pg.homes[i], _ = bits.Mul64(x, t.n)
		pg.tags[i] = tagOf(x)
	}
	for i, h := range pg.homes[:pg.n] {
		pg.lines[i] = addr(&t.tags[h>>3])
	}
	prefetch(pg.lines[:pg.n])
}

// scanAndFetchSlots is stage two: each key's tags settle a miss, name the
// slot to compare, or leave a walk; the slot named (or, forInsert, the
// first empty one) is prefetched, both ends: a 40-byte slot may straddle
// two lines.
func (t *table) scanAndFetchSlots(pg *probeGroup, forInsert bool) {
	fetch := 0
	for i := range pg.n {
		home := pg.homes[i]
		pg.seqs[i] = t.windowSeqs(home)
		candidates, empty := t.scanTags(home, pg.tags[i])
		switch {
		case candidates != 0:
			pg.verdict[i], pg.pos[i] = tagsCandidate, home+lane(candidates)
		case empty != 0:
			pg.verdict[i], pg.pos[i] = tagsMiss, home+lane(empty)
			if !forInsert {
				continue
			}
		default:
			pg.verdict[i] = tagsWalk
			continue
		}
		s := &t.slots[pg.pos[i]]
		pg.lines[fetch], pg.lines[fetch+1] = addr(&s.state), addr(&s.key[3])
		fetch += 2
	}
	prefetch(pg.lines[:fetch])
}

// addr is where a word lies, for prefetch.
func addr(w *atomic.Uint64) uintptr { return uintptr(unsafe.Pointer(w)) }

// ---- readers ----

// lookupBatch sets out[i] to the state of hashes[i] and returns how many are
// held. Safe alongside the writer.
func (t *table) lookupBatch(hashes []block.Hash, out []TxState) (held int) {
	out = out[:len(hashes)]
	var ring [inFlight]probeGroup
	n := len(hashes)
	count := (n + group - 1) / group
	// stages, with compare as the work: no function value, so that the ring
	// stays on the stack.
	for g := -(tagsAhead + slotsAhead); g < count; g++ {
		if f := g + tagsAhead + slotsAhead; f < count {
			t.hashAndFetchTags(&ring[f%inFlight], hashes[f*group:min(f*group+group, n)])
		}
		if s := g + slotsAhead; s >= 0 && s < count {
			t.scanAndFetchSlots(&ring[s%inFlight], false)
		}
		if g >= 0 {
			held += t.compare(&ring[g%inFlight], hashes[g*group:], out[g*group:])
		}
	}
	return held
}

// compare is a reader's stage three: each key's state, into out, from its
// candidate slot if the key is there and no deletion moved entries in its
// window since scan read the tags; from a plain lookup otherwise. It
// returns how many are held.
func (t *table) compare(pg *probeGroup, hashes []block.Hash, out []TxState) (held int) {
	for i := range pg.n {
		k := keyOf(&hashes[i])
		var w uint64
		settled := pg.verdict[i] != tagsWalk
		if pg.verdict[i] == tagsCandidate {
			s := &t.slots[pg.pos[i]]
			w = s.state.Load()
			settled = w != 0 && s.holds(&k)
		}
		if !settled || !t.sameSeqs(pg.homes[i], pg.seqs[i]) {
			w = t.lookupTagged(&k, pg.homes[i], pg.tags[i])
		}
		s := stateKind(w)
		out[i] = s
		if s.Held() {
			held++
		}
	}
	return held
}

// missingChunk is how many txs appendMissing looks up at once.
const missingChunk = 1024

// appendMissing appends the index of every tx of txs that is not held. Safe
// alongside the writer.
func (t *table) appendMissing(dst []int, txs []block.EBTx) []int {
	var hashes [missingChunk]block.Hash
	var states [missingChunk]TxState
	for base := 0; base < len(txs); base += missingChunk {
		n := min(missingChunk, len(txs)-base)
		for i := range n {
			hashes[i] = txs[base+i].TxHash
		}
		t.lookupBatch(hashes[:n], states[:n])
		for i, s := range states[:n] {
			if !s.Held() {
				dst = append(dst, base+i)
			}
		}
	}
	return dst
}

// ---- the writer (the caller holds the Cache's writeMu) ----

// addRefs counts one more reference to each of hashes (addRef), and returns
// how many it counted — those the table had room for are moved to the front
// of hashes, in order (a move only ever writes where stage three has been,
// behind the stages reading ahead) — and the indexes of those not held.
func (t *table) addRefs(hashes []block.Hash) (counted int, missing []int) {
	t.stages(hashes, true, func(base int, pg *probeGroup) {
		for i := range pg.n {
			k := keyOf(&hashes[base+i])
			kind, ok := t.addRefTagged(&k, pg.homes[i], pg.tags[i])
			if ok {
				hashes[counted] = hashes[base+i]
				counted++
			}
			if !kind.Held() {
				missing = append(missing, base+i)
			}
		}
	})
	return counted, missing
}

// releaseAll drops one count of each of hashes (release).
func (t *table) releaseAll(hashes []block.Hash) {
	t.stages(hashes, false, func(base int, pg *probeGroup) {
		for i := range pg.n {
			k := keyOf(&hashes[base+i])
			t.releaseTagged(&k, pg.homes[i], pg.tags[i])
		}
	})
}

// markAll advances each of hashes to state to (mark) and returns what it did.
func (t *table) markAll(hashes []block.Hash, to TxState) []MarkResult {
	results := make([]MarkResult, len(hashes))
	t.stages(hashes, false, func(base int, pg *probeGroup) {
		for i := range pg.n {
			k := keyOf(&hashes[base+i])
			results[base+i] = t.mark(&k, pg.homes[i], pg.tags[i], to)
		}
	})
	return results
}
