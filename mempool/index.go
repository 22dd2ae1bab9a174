package mempool

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
)

// posIndex is one of a lineage's append-only indexes: from a key (a tx
// hash, a tx id, an output spent) to the position of the tx it names. One
// writer stores (the builder: the sync or removal that makes the lineage,
// then the adds under the add lock); snapshot readers find at the same
// time, with no lock and no wait.
//
// It replaced a sync.Map, whose Store allocates an entry and boxes the
// value: a sync rebuilds a lineage's indexes for every tx it keeps, and
// those stores were much of its cost. BenchmarkIndex measures both, and a
// Go map (which no reader may read while it is written) as the reference.
//
// The table holds no keys: a slot is one word, a tag (32 bits of the key's
// hash, which also pick its home slot) and the position; the caller
// confirms a tag match against the tx at that position (is), which it
// holds anyway. So a table is 8 bytes a slot and a
// rebuild writes one word per entry. Open addressing, linear probing, at
// most half full, no deletion (a lineage only grows; removals and syncs
// start a new one). A reader loads a slot's word atomically, and the tx at
// a position below its snapshot's length was written before the snapshot
// was published, so a reader sees every entry of its snapshot and never
// reads a tx a writer is appending.
//
// When the newest table is half full the writer publishes a larger one: up
// to mergeBelow entries it copies every table into it (the tags say where
// each word goes), so the lineages a sync starts small and the adds fill
// have one table; beyond, it adds a table twice as large beside the others
// rather than copy that many under the add lock, and finds probe each,
// newest first. The builder sizes the first table for what the lineage
// starts with and the adds expected, so few lineages have more than two.
//
// Keys are hashes a submitter can grind, so slots are chosen by a keyed
// hash (keyHash) under a seed drawn at start: no one can aim txs at one
// run of slots.
type posIndex struct {
	tables atomic.Pointer[[]*posTable] // oldest first; replaced, never mutated, when a table is added
}

// posTable is one table of a posIndex.
type posTable struct {
	slots []uint64 // 0: empty; else tag<<32 | position+1; atomic once shared
	mask  uint64
	used  int // written and read by the writer only
}

const (
	// minTableSlots is the smallest table: 32 entries before it is half
	// full.
	minTableSlots = 64
	// mergeBelow is how many entries a grow copies at most: well under a
	// millisecond under the add lock, and the copies are geometric, so a
	// few ns per entry over a lineage.
	mergeBelow = 1 << 16
)

// reserve makes the first table large enough for n entries at most half
// full. Only before the first store.
func (x *posIndex) reserve(n int) {
	x.tables.Store(&[]*posTable{newPosTable(2 * n)})
}

// newPosTable returns a table of at least n slots, a power of two.
func newPosTable(n int) *posTable {
	size := minTableSlots
	for size < n {
		size *= 2
	}
	return &posTable{slots: make([]uint64, size), mask: uint64(size - 1)}
}

// tagOf folds a key's hash to the 32 bits a slot keeps.
func tagOf(h uint64) uint32 { return uint32(h>>32) ^ uint32(h) }

// find returns the position below n, whose tx is confirms is the key's, of
// the key of hash h.
func (x *posIndex) find(h uint64, n int, is func(pos int) bool) (int, bool) {
	tables := x.tables.Load()
	if tables == nil {
		return 0, false
	}
	tag := tagOf(h)
	for i := len(*tables) - 1; i >= 0; i-- {
		t := (*tables)[i]
		for j := uint64(tag) & t.mask; ; j = (j + 1) & t.mask {
			w := atomic.LoadUint64(&t.slots[j])
			if w == 0 {
				break
			}
			// A position at or beyond n is a later snapshot's: its tx may
			// be being written, so it is not confirmed, only skipped.
			if uint32(w>>32) == tag {
				if pos := int(uint32(w)) - 1; pos < n && is(pos) {
					return pos, true
				}
			}
		}
	}
	return 0, false
}

// store adds the key of hash h at pos. Keys are never stored twice (a
// lineage's txs are distinct, and each spends an output at most once).
//
// shared says readers may be finding meanwhile (the lineage is published):
// then each slot is written with an atomic store. A lineage a sync or
// removal is building is read by no one until its snapshot is published
// (an atomic store that orders every write before it), so it is written
// with plain stores: an atomic store is a full fence on amd64, and fences
// between the writes of a rebuild keep their cache misses from
// overlapping.
func (x *posIndex) store(h uint64, pos int, shared bool) {
	var t *posTable
	if tables := x.tables.Load(); tables != nil {
		t = (*tables)[len(*tables)-1]
	}
	if t == nil || 2*(t.used+1) > len(t.slots) {
		t = x.grow()
	}
	t.put(uint64(tagOf(h))<<32|uint64(uint32(pos+1)), shared)
}

// put writes w at its tag's first free slot.
func (t *posTable) put(w uint64, shared bool) {
	j := (w >> 32) & t.mask
	for t.slots[j] != 0 { // only the writer writes: its own reads need no atomics
		j = (j + 1) & t.mask
	}
	if shared {
		atomic.StoreUint64(&t.slots[j], w)
	} else {
		t.slots[j] = w
	}
	t.used++
}

// grow publishes a table with room for more entries and returns it: all
// the entries copied into one table of four times their number while they
// are fewer than mergeBelow, else a table twice the newest's added.
func (x *posIndex) grow() *posTable {
	var tables []*posTable
	if p := x.tables.Load(); p != nil {
		tables = *p
	}
	total := 0
	for _, t := range tables {
		total += t.used
	}
	if total < mergeBelow {
		merged := newPosTable(4 * (total + 1))
		for _, t := range tables {
			for _, w := range t.slots {
				if w != 0 {
					merged.put(w, false) // merged is no one's until published below
				}
			}
		}
		x.tables.Store(&[]*posTable{merged})
		return merged
	}
	added := newPosTable(2 * len(tables[len(tables)-1].slots))
	grown := append(append([]*posTable(nil), tables...), added)
	x.tables.Store(&grown)
	return added
}

// indexSeed keys the hash; math/rand/v2's generator is seeded by the
// runtime from the OS, so the seed is unpredictable from outside.
var indexSeed = [4]uint64{rand.Uint64(), rand.Uint64(), rand.Uint64(), rand.Uint64()}

// keyHash hashes a key: a tx hash or id (ix 0) or an output (its tx id and
// index), with wyhash's mixing of the words under indexSeed — two 128-bit
// multiplies folded, a few ns.
func keyHash(id *[32]byte, ix uint32) uint64 {
	w0 := binary.LittleEndian.Uint64(id[0:8])
	w1 := binary.LittleEndian.Uint64(id[8:16])
	w2 := binary.LittleEndian.Uint64(id[16:24])
	w3 := binary.LittleEndian.Uint64(id[24:32])
	return mix(w0^indexSeed[0], w1^indexSeed[1]) ^ mix(w2^indexSeed[2], w3^indexSeed[3]^uint64(ix))
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}
