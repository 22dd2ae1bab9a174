package leiosdb

import (
	"bytes"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
)

// txIndex is what the store knows of the txs of the volatile window, held
// in memory, so that storing or dropping a body of thousands of txs reads
// nothing from Pebble:
//
//   - txs: every stored tx some volatile body (one no promoted point names)
//     holds, with its size, how many such bodies hold it, and whether a
//     promoted body holds it too (then it carries a pin, 'r', on disk). A
//     tx leaves it when no volatile body holds it: deleted with its bytes
//     if no pin keeps it, else kept on disk for good, with the certified
//     closures, and out of memory, which must not grow with the chain.
//   - wants: for every tx a held body misses, the bodies that miss it and
//     where. A missing tx is in it from its body's arrival to its own,
//     most often milliseconds.
//
// Neither is written to Pebble: Open rebuilds both from the volatile and
// the incomplete bodies, the txs' bytes and the pins. A body that names a
// tx the index does not hold counts it as missing, without asking Pebble
// whether the tx is stored for a certified closure: such a tx is on the
// immutable chain, so a new EB naming it is invalid; when it arrives it is
// stored again (the same bytes), and the pin keeps it when that body goes.
//
// The cost is memory: about 100 bytes a tx of the volatile window.
//
// Invariant: between writers, txs holds exactly the stored txs some
// volatile body holds (names, and does not miss), each with the number of
// those bodies, Pinned only if a pin is stored; wants holds, for each held
// body, the txs it misses, as many as its missing count, none of them in
// txs. Every stored tx is in txs or pinned. Only a writer (holding
// writeMu) changes them, through an indexEdit, and only after its batch
// committed; readers take mu for reading. Lock order: writeMu, then mu.
type txIndex struct {
	mu    sync.RWMutex
	txs   map[block.Hash]indexedTx  // guarded by mu
	wants map[block.Hash][]bodyWant // guarded by mu
}

// indexedTx is a stored tx of the volatile window.
type indexedTx struct {
	Size     uint64
	Volatile uint64 // volatile bodies holding it; it is indexed while > 0
	Pinned   bool   // a promoted body held it while indexed: its pin is stored
}

// bodyWant is where the held body eb names a tx it misses.
type bodyWant struct {
	eb     block.Hash
	Offset uint64
	Size   uint64 // the size the body declares for the tx
}

// loadTxIndex builds the index from the store r: the stored txs its
// volatile bodies name, and what its incomplete bodies miss. It also
// returns the bodies whose stored missing count is not what they miss
// (txindex.go's doc: a tx kept for a certified closure and named again),
// with the count they should hold.
func loadTxIndex(r reader) (*txIndex, map[block.Hash]uint64, error) {
	x := &txIndex{txs: make(map[block.Hash]indexedTx), wants: make(map[block.Hash][]bodyWant)}
	volatile := make(map[block.Hash]uint64) // tx → volatile bodies naming it
	seen := make(map[block.Hash]bool)
	err := scanPrefix(r, []byte{prefixVolatile}, func(k, _ []byte) (bool, error) {
		eb := parsePointKey(k).Hash
		if seen[eb] {
			return true, nil
		}
		seen[eb] = true
		if _, held, err := readBodyState(r, eb); err != nil || !held {
			return true, err // announced, no body yet
		}
		isVolatile, err := bodyVolatile(r, eb)
		if err != nil || !isVolatile {
			return true, err
		}
		txs, err := bodyEntries(r, eb)
		for _, tx := range txs {
			volatile[tx.TxHash]++
		}
		return true, err
	})
	if err != nil {
		return nil, nil, err
	}
	hashes := make([]block.Hash, 0, len(volatile))
	for h := range volatile {
		hashes = append(hashes, h)
	}
	err = probeSorted(r, prefixTx, hashes, func(i int, v []byte) error {
		x.txs[hashes[i]] = indexedTx{Size: uint64(len(v)), Volatile: volatile[hashes[i]]}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	err = probeSorted(r, prefixPin, hashes, func(i int, _ []byte) error {
		if tx, ok := x.txs[hashes[i]]; ok {
			tx.Pinned = true
			x.txs[hashes[i]] = tx
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}

	// What the incomplete bodies miss: a tx the index holds is held; one it
	// does not is missing, even if stored for a certified closure.
	recount := make(map[block.Hash]uint64)
	err = scanPrefix(r, []byte{prefixBodyState}, func(k, v []byte) (bool, error) {
		state, err := decodeBodyState(v)
		if err != nil || state.Missing == 0 {
			return true, err
		}
		eb := hashAt(k, 1)
		txs, err := bodyEntries(r, eb)
		if err != nil {
			return false, err
		}
		var missing uint64
		for i, tx := range txs {
			if _, held := x.txs[tx.TxHash]; !held {
				x.wants[tx.TxHash] = append(x.wants[tx.TxHash], bodyWant{eb: eb, Offset: uint64(i), Size: uint64(tx.Size)})
				missing++
			}
		}
		if missing != state.Missing {
			recount[eb] = missing
		}
		return true, nil
	})
	return x, recount, err
}

// bodyVolatile reports whether no promoted point names the body eb.
func bodyVolatile(r reader, eb block.Hash) (bool, error) {
	volatile := true
	err := scanPrefix(r, hashKey(prefixByHash, eb), func(k, _ []byte) (bool, error) {
		rec, ok, err := readPoint(r, parseByHashKey(k))
		if ok && rec.Promoted {
			volatile = false
		}
		return volatile, err
	})
	return volatile, err
}

// held sets out[i] to whether the store holds hashes[i], and returns how
// many it holds: from memory for the txs of the volatile window, from r
// for the others (the certified closures').
func (x *txIndex) held(r reader, hashes []block.Hash, out []bool) (int, error) {
	var misses []block.Hash
	var at []int
	n := 0
	x.mu.RLock()
	for i, h := range hashes {
		// A tx not indexed may be stored for a certified closure, even if a
		// body misses it (named again): Pebble knows.
		if _, out[i] = x.txs[h]; out[i] {
			n++
		} else {
			misses, at = append(misses, h), append(at, i)
		}
	}
	x.mu.RUnlock()
	err := probeSorted(r, prefixTx, misses, func(i int, _ []byte) error {
		out[at[i]] = true
		n++
		return nil
	})
	return n, err
}

// missing returns, ascending, the offsets of txs that the body eb misses.
func (x *txIndex) missing(eb block.Hash, txs []block.EBTx) []int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var offsets []int
	for i, tx := range txs {
		if slices.ContainsFunc(x.wants[tx.TxHash], func(w bodyWant) bool { return w.eb == eb && w.Offset == uint64(i) }) {
			offsets = append(offsets, i)
		}
	}
	return offsets
}

// indexEdit is one writer's changes to the index, seen by its own later
// reads, until commit applies them once the writer's batch committed.
type indexEdit struct {
	index *txIndex
	txs   map[block.Hash]optTx
	wants map[block.Hash][]bodyWant // an empty list: the tx is wanted no more
}

// optTx is a tx that may not be indexed.
type optTx struct {
	indexedTx
	Indexed bool
}

func (x *txIndex) edit() *indexEdit {
	return &indexEdit{index: x, txs: make(map[block.Hash]optTx), wants: make(map[block.Hash][]bodyWant)}
}

// get is the tx h as this edit leaves it. The writer holds writeMu, so no
// one else changes the index under it: reading memory without mu is safe.
func (e *indexEdit) get(h block.Hash) optTx {
	if tx, ok := e.txs[h]; ok {
		return tx
	}
	tx, ok := e.index.txs[h]
	return optTx{tx, ok}
}

// set records tx h; with no volatile body naming it, it leaves memory.
func (e *indexEdit) set(h block.Hash, tx indexedTx) { e.txs[h] = optTx{tx, tx.Volatile > 0} }

// forget takes tx h out of memory.
func (e *indexEdit) forget(h block.Hash) { e.txs[h] = optTx{} }

// wantsOf is the bodies that miss tx h, as this edit leaves them. The
// list is the index's or the edit's own: never change it in place.
func (e *indexEdit) wantsOf(h block.Hash) []bodyWant {
	if ws, ok := e.wants[h]; ok {
		return ws
	}
	return e.index.wants[h]
}

// want records that body w.eb misses tx h.
func (e *indexEdit) want(h block.Hash, w bodyWant) {
	e.wants[h] = append(slices.Clip(e.wantsOf(h)), w)
}

// unwant forgets that body eb misses tx h.
func (e *indexEdit) unwant(h block.Hash, eb block.Hash) {
	e.wants[h] = slices.DeleteFunc(slices.Clone(e.wantsOf(h)), func(w bodyWant) bool { return w.eb == eb })
}

// wantedNoMore forgets every body that misses tx h: it is stored.
func (e *indexEdit) wantedNoMore(h block.Hash) { e.wants[h] = nil }

// commit applies the edit to the index: call it once the batch committed.
func (e *indexEdit) commit() {
	if len(e.txs) == 0 && len(e.wants) == 0 {
		return
	}
	e.index.mu.Lock()
	defer e.index.mu.Unlock()
	for h, tx := range e.txs {
		if tx.Indexed {
			e.index.txs[h] = tx.indexedTx
		} else {
			delete(e.index.txs, h)
		}
	}
	for h, ws := range e.wants {
		if len(ws) == 0 {
			delete(e.index.wants, h)
		} else {
			e.index.wants[h] = ws
		}
	}
}

// probeSorted calls fn(i, value) for every hashes[i] present in the
// keyspace prefix of r, in ascending hash order, with one iterator whose
// bloom-filtered seeks only move forward; value is valid only during the
// call.
func probeSorted(r reader, prefix byte, hashes []block.Hash, fn func(i int, value []byte) error) (err error) {
	if len(hashes) == 0 {
		return nil
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	key := make([]byte, 1+hashLen)
	key[0] = prefix
	for _, o := range sortedOrder(hashes) {
		copy(key[1:], hashes[o.index][:])
		if !it.SeekPrefixGE(key) || !bytes.Equal(it.Key(), key) {
			if err := it.Error(); err != nil {
				return err
			}
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		if err := fn(o.index, v); err != nil {
			return err
		}
	}
	return nil
}
