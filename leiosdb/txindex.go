package leiosdb

import (
	"bytes"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
)

// txIndex is what the store's writers and readers ask of the txs of the
// volatile window, held in memory:
//
//   - txs is the 't' record of every stored tx that a volatile body (one no
//     promoted point names) names, with the number of such bodies. Every
//     body stored or dropped reads the records of all its txs, and a body
//     names thousands; read from Pebble, each was a seek through the
//     memtables and every level (most of the node's store CPU under load,
//     and reads of table blocks that every compaction of the hash-spread
//     keyspace makes cold). A tx only promoted bodies name is dropped from
//     memory: the certified closures are kept for good, and so would the
//     memory be. Its record is read from Pebble when a body names it again
//     (a later EB naming a certified tx is invalid, so that is rare).
//   - wants is, for every tx a held body misses, the bodies that miss it
//     and where. It is not stored at all: it follows from the bodies, their
//     missing counts and 't', and Open rebuilds it from the few bodies not
//     complete. A missing tx is in it from its body's arrival to its own,
//     most often milliseconds: stored, it cost two Pebble writes and a seek
//     per tx.
//
// The cost is memory: some 100 bytes a tx of the volatile window.
//
// Invariant: between writers, txs holds exactly the stored txs some
// volatile body names, each with its 't' record and the number of those
// bodies, and wants exactly the txs the stored bodies miss. Only a writer
// (holding writeMu) changes them, through an indexEdit, and only after its
// batch committed; readers take mu for reading. Lock order: writeMu, then
// mu.
type txIndex struct {
	mu    sync.RWMutex
	txs   map[block.Hash]indexedTx  // guarded by mu
	wants map[block.Hash][]bodyWant // guarded by mu
}

// indexedTx is a stored tx as the index keeps it: its 't' record, and the
// number of volatile bodies naming it.
type indexedTx struct {
	txRef
	Volatile uint64
}

// bodyWant is where the held body eb names a tx it misses.
type bodyWant struct {
	eb     block.Hash
	Offset uint64
	Size   uint64 // the size the body declares for the tx
}

// loadTxIndex builds the index from the store r: the txs of its volatile
// bodies, and what its incomplete bodies miss.
func loadTxIndex(r reader) (*txIndex, error) {
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
		return nil, err
	}
	hashes := make([]block.Hash, 0, len(volatile))
	for h := range volatile {
		hashes = append(hashes, h)
	}
	err = probeSorted(r, hashes, func(i int, v []byte) error {
		ref, err := decodeTxRef(v)
		x.txs[hashes[i]] = indexedTx{ref, volatile[hashes[i]]}
		return err
	})
	if err != nil {
		return nil, err
	}

	var incomplete []block.Hash
	err = scanPrefix(r, []byte{prefixBodyState}, func(k, v []byte) (bool, error) {
		state, err := decodeBodyState(v)
		if state.Missing > 0 {
			incomplete = append(incomplete, hashAt(k, 1))
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	e := x.edit(nil, r)
	for _, eb := range incomplete {
		txs, err := bodyEntries(r, eb)
		if err != nil {
			return nil, err
		}
		for i, tx := range txs {
			ref, err := e.get(tx.TxHash)
			if err != nil {
				return nil, err
			}
			if !ref.Stored {
				x.wants[tx.TxHash] = append(x.wants[tx.TxHash], bodyWant{eb: eb, Offset: uint64(i), Size: uint64(tx.Size)})
			}
		}
	}
	return x, nil
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
// for the others.
func (x *txIndex) held(r reader, hashes []block.Hash, out []bool) (int, error) {
	var misses []block.Hash
	var at []int
	n := 0
	x.mu.RLock()
	for i, h := range hashes {
		_, out[i] = x.txs[h]
		switch {
		case out[i]:
			n++
		case len(x.wants[h]) == 0: // a tx some body misses is not held
			misses, at = append(misses, h), append(at, i)
		}
	}
	x.mu.RUnlock()
	err := probeSorted(r, misses, func(i int, _ []byte) error {
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

// indexEdit is one writer's changes to the index: records written into its
// batch too, wants only here; both seen by the writer's own later reads,
// until commit applies them to the index once the batch committed.
type indexEdit struct {
	index *txIndex
	batch *pebble.Batch
	r     reader // the store as the writer sees it: what memory does not hold
	txs   map[block.Hash]optTx
	wants map[block.Hash][]bodyWant // an empty list: the tx is wanted no more
	read  map[block.Hash]optTx      // records read from r, by prefetch
}

// optTx is a tx that may not be stored.
type optTx struct {
	indexedTx
	Stored bool
}

// edit begins a writer's edit, reading through r what memory does not
// hold, writing records into b.
func (x *txIndex) edit(b *pebble.Batch, r reader) *indexEdit {
	return &indexEdit{index: x, batch: b, r: r, txs: make(map[block.Hash]optTx), wants: make(map[block.Hash][]bodyWant)}
}

// get is the tx h as this edit leaves it: from the edit, memory, or the
// store. The writer holds writeMu, so no one else changes the index under
// it: reading memory without mu is safe.
func (e *indexEdit) get(h block.Hash) (optTx, error) {
	if tx, ok := e.txs[h]; ok {
		return tx, nil
	}
	if tx, ok := e.index.txs[h]; ok {
		return optTx{tx, true}, nil
	}
	if len(e.wantsOf(h)) > 0 {
		return optTx{}, nil // a body misses it: not stored
	}
	if tx, ok := e.read[h]; ok {
		return tx, nil
	}
	v, ok, err := getCopy(e.r, hashKey(prefixTxRef, h))
	if err != nil || !ok {
		return optTx{}, err
	}
	ref, err := decodeTxRef(v)
	return optTx{indexedTx{ref, 0}, true}, err
}

// prefetch reads from r, with one sorted probe, the records of those of
// hashes that neither the edit nor memory knows: a body's new txs, which
// one Get each would cost several times as much.
func (e *indexEdit) prefetch(hashes []block.Hash) error {
	var unknown []block.Hash
	for _, h := range hashes {
		_, inEdit := e.txs[h]
		_, inMemory := e.index.txs[h]
		if !inEdit && !inMemory && len(e.wantsOf(h)) == 0 {
			unknown = append(unknown, h)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	e.read = make(map[block.Hash]optTx, len(unknown))
	for _, h := range unknown {
		e.read[h] = optTx{}
	}
	return probeSorted(e.r, unknown, func(i int, v []byte) error {
		ref, err := decodeTxRef(v)
		e.read[unknown[i]] = optTx{indexedTx{ref, 0}, true}
		return err
	})
}

// set stores tx h's record, and keeps it in memory while volatile bodies
// name it.
func (e *indexEdit) set(h block.Hash, tx indexedTx) {
	e.txs[h] = optTx{tx, true}
	_ = e.batch.Set(hashKey(prefixTxRef, h), tx.txRef.encode(), nil)
}

// count changes only how many volatile bodies name tx h: its record stays.
func (e *indexEdit) count(h block.Hash, tx indexedTx) { e.txs[h] = optTx{tx, true} }

// delete deletes tx h's record.
func (e *indexEdit) delete(h block.Hash) {
	e.txs[h] = optTx{}
	_ = e.batch.Delete(hashKey(prefixTxRef, h), nil)
}

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
		if tx.Stored && tx.Volatile > 0 {
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

// probeSorted calls fn(i, value) for every hashes[i] present in the 't'
// keyspace of r, in ascending hash order, with one iterator whose
// bloom-filtered seeks only move forward; value is valid only during the
// call.
func probeSorted(r reader, hashes []block.Hash, fn func(i int, value []byte) error) (err error) {
	if len(hashes) == 0 {
		return nil
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixTxRef}, UpperBound: []byte{prefixTxRef + 1}})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	key := make([]byte, 1+hashLen)
	key[0] = prefixTxRef
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
