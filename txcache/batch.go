package txcache

import (
	"math/bits"
	"unsafe"

	"github.com/leiosnode/leiosnode/block"
)

// A probe of a cold table waits on memory twice: for the state words from
// its home, then for the key they point at. A batch pays neither wait one
// key at a time. It runs its keys through three stages, a group at a time,
// each stage some groups behind the one before: stage one hashes a group
// and prefetches the line of state words at each home; stage two,
// metaAhead groups later, scans them (in the cache by then) and prefetches
// the one key each key's tag points at; stage three, keysAhead groups
// later still, does the key's work — a reader compares the key, the writer
// inserts, marks or releases it. So the misses of several groups are in
// flight while the CPU works on others: a reader's miss costs the line of
// state words only, a hit that line and its key's.
//
// Readers may scan ahead because they change nothing. The writer's stage
// two only guesses, for its prefetch, where stage three will work: an
// insert may take the slot a later key's scan found empty, so stage three
// probes again, in order, with the lines at hand.
//
// (Groups of 8 to 32 keys, one to four groups apart, measured alike on the
// two-core machine this was tuned on.)
const (
	group     = 16 // keys a stage works on at once
	metaAhead = 2  // groups between a group's state-word prefetch and its scan
	keysAhead = 2  // groups between a group's scan and its work
	inFlight  = metaAhead + keysAhead + 1
)

// probeGroup is one group of keys on its way through the stages.
type probeGroup struct {
	n     int
	homes [group]uint64
	tags  [group]uint32
	// Set by scan: what the state words settled for each key, the slot
	// to compare, and the sequence word of the stripe of the line it
	// scanned, read before the state words.
	verdict [group]uint8
	pos     [group]uint64
	seq     [group]uint64
	lines   [group]uintptr // prefetch scratch
}

// What the state words of a home's line settled for a key.
const (
	scanMiss      = iota // no slot before the first empty one has its tag
	scanCandidate        // pos has its tag: compare the key
	scanWalk             // the line ended first: walk
)

// stages runs hashes through the stages, calling work with each group in
// order once its lines are prefetched. forInsert makes stage two prefetch,
// for a key the state words do not find, the key an insert would write.
func (t *table) stages(hashes []block.Hash, forInsert bool, work func(base int, pg *probeGroup)) {
	var ring [inFlight]probeGroup
	n := len(hashes)
	count := (n + group - 1) / group
	for g := -(metaAhead + keysAhead); g < count; g++ {
		if f := g + metaAhead + keysAhead; f < count {
			t.hashAndFetchMeta(&ring[f%inFlight], hashes[f*group:min(f*group+group, n)])
		}
		if s := g + keysAhead; s >= 0 && s < count {
			t.scanAndFetchKeys(&ring[s%inFlight], forInsert)
		}
		if g >= 0 {
			work(g*group, &ring[g%inFlight])
		}
	}
}

// hashAndFetchMeta is stage one: homes and tags, and a prefetch of the
// line of state words at each home.
func (t *table) hashAndFetchMeta(pg *probeGroup, hashes []block.Hash) {
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
		pg.lines[i] = uintptr(unsafe.Pointer(&t.meta[h]))
	}
	prefetch(pg.lines[:pg.n])
}

// scanAndFetchKeys is stage two: the state words from each key's home to
// the end of their line settle a miss, name the slot to compare, or leave
// a walk; the key named (or, forInsert, the empty slot's) is prefetched,
// and for a walk the next line of state words.
func (t *table) scanAndFetchKeys(pg *probeGroup, forInsert bool) {
	fetch := 0
	for i := range pg.n {
		home, tag := pg.homes[i], pg.tags[i]
		pg.seq[i] = t.stripes[home>>stripeShift].Load()
		end := min(home|(metaLine-1), t.windowEnd(home))
		pg.verdict[i] = scanWalk
		for pos := home; pos <= end; pos++ {
			w := t.meta[pos].Load()
			if w == 0 {
				pg.verdict[i], pg.pos[i] = scanMiss, pos
				break
			}
			if stateTag(w) == tag {
				pg.verdict[i], pg.pos[i] = scanCandidate, pos
				break
			}
		}
		switch {
		case pg.verdict[i] == scanCandidate || pg.verdict[i] == scanMiss && forInsert:
			pg.lines[fetch] = uintptr(unsafe.Pointer(&t.keys[pg.pos[i]]))
			fetch++
		case pg.verdict[i] == scanWalk && end < t.windowEnd(home):
			pg.lines[fetch] = uintptr(unsafe.Pointer(&t.meta[end+1]))
			fetch++
		}
	}
	prefetch(pg.lines[:fetch])
}

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
	for g := -(metaAhead + keysAhead); g < count; g++ {
		if f := g + metaAhead + keysAhead; f < count {
			t.hashAndFetchMeta(&ring[f%inFlight], hashes[f*group:min(f*group+group, n)])
		}
		if s := g + keysAhead; s >= 0 && s < count {
			t.scanAndFetchKeys(&ring[s%inFlight], false)
		}
		if g >= 0 {
			held += t.compare(&ring[g%inFlight], hashes[g*group:], out[g*group:])
		}
	}
	return held
}

// sameLineSeq reports whether no deletion walked the stripe of home's line
// since scan read its sequence word seq. A line lies in one stripe, and a
// settled scan read only that line's state words and the key of one of its
// slots: so what it read was there all along.
func (t *table) sameLineSeq(home, seq uint64) bool {
	return seq&1 == 0 && t.stripes[home>>stripeShift].Load() == seq
}

// compare is a reader's stage three: each key's state, into out, from what
// scan settled — a miss, or its candidate slot if the key is there — if no
// deletion walked the stripe of its line since; from a plain lookup
// otherwise. It returns how many are held.
func (t *table) compare(pg *probeGroup, hashes []block.Hash, out []TxState) (held int) {
	for i := range pg.n {
		k := keyOf(&hashes[i])
		var w uint32
		settled := pg.verdict[i] == scanMiss
		if pg.verdict[i] == scanCandidate {
			pos := pg.pos[i]
			w = t.meta[pos].Load()
			settled = w != 0 && stateTag(w) == pg.tags[i] && t.holds(pos, &k)
		}
		if !settled || !t.sameLineSeq(pg.homes[i], pg.seq[i]) {
			w = t.lookup(&k, pg.homes[i], pg.tags[i])
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
	missing = make([]int, 0, len(hashes)) // a new body's txs are mostly missing
	t.stages(hashes, true, func(base int, pg *probeGroup) {
		for i := range pg.n {
			k := keyOf(&hashes[base+i])
			kind, ok := t.addRef(&k, pg.homes[i], pg.tags[i])
			if ok {
				hashes[counted] = hashes[base+i]
				counted++
			}
			if !kind.Held() {
				missing = append(missing, base+i)
			}
		}
	})
	t.used.Store(t.occupied)
	return counted, missing
}

// releaseAll drops one count of each of hashes (release).
func (t *table) releaseAll(hashes []block.Hash) {
	t.stages(hashes, false, func(base int, pg *probeGroup) {
		for i := range pg.n {
			k := keyOf(&hashes[base+i])
			t.release(&k, pg.homes[i], pg.tags[i])
		}
	})
	t.used.Store(t.occupied)
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
