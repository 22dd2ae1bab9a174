package leiosdb

import (
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
)

// txIndex is what the store's writers and its membership probe read for
// every tx of a body, held in memory:
//
//   - refs is the 't' keyspace: for every stored tx, its reference count
//     and size. Every body stored or dropped reads the refs of all its txs,
//     and a body names thousands; read from Pebble, each is a seek through
//     the memtables and every level (most of the node's store CPU under
//     load, and reads of table blocks that every compaction of the
//     hash-spread keyspace makes cold). From memory it is a map lookup.
//   - wants is, for every tx a held body misses, the bodies that miss it
//     and where. It is not stored at all: it follows from the bodies, their
//     missing counts and refs, and Open rebuilds it from the few bodies not
//     complete. A missing tx is in it from its body's arrival to its own,
//     most often milliseconds: stored, it cost two Pebble writes and a
//     seek per tx.
//
// The cost is memory: some 60 bytes a stored tx, 120 MB for the two million
// txs of a full volatile window.
//
// Invariant: between writers, refs holds exactly the 't' keyspace and wants
// exactly the txs the stored bodies miss. Only a writer (holding writeMu)
// changes them, through an indexEdit, and only after its batch committed;
// readers of refs take mu for reading; only writers read wants. Lock
// order: writeMu, then mu.
type txIndex struct {
	mu    sync.RWMutex
	refs  map[block.Hash]txRef      // guarded by mu
	wants map[block.Hash][]bodyWant // guarded by writeMu
}

// bodyWant is where the held body eb names a tx it misses.
type bodyWant struct {
	eb     block.Hash
	Offset uint64
	Size   uint64 // the size the body declares for the tx
}

// loadTxIndex reads the 't' keyspace of r, and rebuilds wants from the
// bodies whose closures are incomplete.
func loadTxIndex(r reader) (*txIndex, error) {
	x := &txIndex{refs: make(map[block.Hash]txRef), wants: make(map[block.Hash][]bodyWant)}
	err := scanPrefix(r, []byte{prefixTxRef}, func(k, v []byte) (bool, error) {
		ref, err := decodeTxRef(v)
		if err != nil {
			return false, err
		}
		x.refs[hashAt(k, 1)] = ref
		return true, nil
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
	for _, eb := range incomplete {
		txs, err := bodyEntries(r, eb)
		if err != nil {
			return nil, err
		}
		for i, tx := range txs {
			if _, stored := x.refs[tx.TxHash]; !stored {
				x.wants[tx.TxHash] = append(x.wants[tx.TxHash], bodyWant{eb: eb, Offset: uint64(i), Size: uint64(tx.Size)})
			}
		}
	}
	return x, nil
}

// lookup calls fn(i, ref, stored) for each of hashes, under one read lock.
func (x *txIndex) lookup(hashes []block.Hash, fn func(i int, ref txRef, stored bool)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i, h := range hashes {
		ref, ok := x.refs[h]
		fn(i, ref, ok)
	}
}

// indexEdit is one writer's changes to the index: refs written into its
// batch too, wants only here; both seen by the writer's own later reads,
// until commit applies them to the index once the batch committed.
type indexEdit struct {
	index *txIndex
	batch *pebble.Batch
	refs  map[block.Hash]optTxRef
	wants map[block.Hash][]bodyWant // an empty list: the tx is wanted no more
}

func (x *txIndex) edit(b *pebble.Batch) *indexEdit {
	return &indexEdit{index: x, batch: b, refs: make(map[block.Hash]optTxRef), wants: make(map[block.Hash][]bodyWant)}
}

// get is the ref of h as this edit leaves it. The writer holds writeMu, so
// no one else changes the index under it: reading without mu is safe.
func (e *indexEdit) get(h block.Hash) optTxRef {
	if ref, ok := e.refs[h]; ok {
		return ref
	}
	ref, ok := e.index.refs[h]
	return optTxRef{ref, ok}
}

func (e *indexEdit) set(h block.Hash, ref txRef) {
	e.refs[h] = optTxRef{ref, true}
	_ = e.batch.Set(hashKey(prefixTxRef, h), ref.encode(), nil)
}

func (e *indexEdit) delete(h block.Hash) {
	e.refs[h] = optTxRef{}
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
	for h, ws := range e.wants {
		if len(ws) == 0 {
			delete(e.index.wants, h)
		} else {
			e.index.wants[h] = ws
		}
	}
	if len(e.refs) == 0 {
		return
	}
	e.index.mu.Lock()
	defer e.index.mu.Unlock()
	for h, ref := range e.refs {
		if ref.Stored {
			e.index.refs[h] = ref.txRef
		} else {
			delete(e.index.refs, h)
		}
	}
}
