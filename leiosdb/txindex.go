package leiosdb

import (
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
)

// txIndex is the 't' keyspace held in memory: for every stored tx, its
// reference count and size. Every body stored or dropped reads the refs of
// all its txs, and a body names thousands; read from Pebble, each is a
// seek through the memtables and every level (most of the node's store
// CPU under load, and reads of table blocks that every compaction of the
// hash-spread keyspace makes cold). From memory it is a map lookup. The
// cost is memory: some 60 bytes a stored tx, 120 MB for the two million
// txs of a full volatile window.
//
// Invariant: between writers, refs holds exactly the 't' keyspace. Only a
// writer (holding writeMu) changes it, through a refEdit, and only after
// its batch committed; readers take mu for reading. Lock order: writeMu,
// then mu.
type txIndex struct {
	mu   sync.RWMutex
	refs map[block.Hash]txRef // guarded by mu
}

// loadTxIndex reads the 't' keyspace of r.
func loadTxIndex(r reader) (*txIndex, error) {
	x := &txIndex{refs: make(map[block.Hash]txRef)}
	err := scanPrefix(r, []byte{prefixTxRef}, func(k, v []byte) (bool, error) {
		ref, err := decodeTxRef(v)
		if err != nil {
			return false, err
		}
		x.refs[hashAt(k, 1)] = ref
		return true, nil
	})
	return x, err
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

// len is the number of stored txs.
func (x *txIndex) len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.refs)
}

// refEdit is one writer's changes to the 't' keyspace: written into its
// batch, and seen by its own later reads, until commit applies them to the
// index once the batch is durable in Pebble's sense (committed).
type refEdit struct {
	index   *txIndex
	batch   *pebble.Batch
	changed map[block.Hash]optTxRef
}

func (x *txIndex) edit(b *pebble.Batch) *refEdit {
	return &refEdit{index: x, batch: b, changed: make(map[block.Hash]optTxRef)}
}

// get is the ref of h as this edit leaves it. The writer holds writeMu, so
// no one else changes the index under it: reading without mu is safe.
func (e *refEdit) get(h block.Hash) optTxRef {
	if ref, ok := e.changed[h]; ok {
		return ref
	}
	ref, ok := e.index.refs[h]
	return optTxRef{ref, ok}
}

// getAll is get for each of hashes, in their order.
func (e *refEdit) getAll(hashes []block.Hash) []optTxRef {
	refs := make([]optTxRef, len(hashes))
	for i, h := range hashes {
		refs[i] = e.get(h)
	}
	return refs
}

func (e *refEdit) set(h block.Hash, ref txRef) {
	e.changed[h] = optTxRef{ref, true}
	_ = e.batch.Set(hashKey(prefixTxRef, h), ref.encode(), nil)
}

func (e *refEdit) delete(h block.Hash) {
	e.changed[h] = optTxRef{}
	_ = e.batch.Delete(hashKey(prefixTxRef, h), nil)
}

// commit applies the edit to the index: call it once the batch committed.
func (e *refEdit) commit() {
	if len(e.changed) == 0 {
		return
	}
	e.index.mu.Lock()
	defer e.index.mu.Unlock()
	for h, ref := range e.changed {
		if ref.Stored {
			e.index.refs[h] = ref.txRef
		} else {
			delete(e.index.refs, h)
		}
	}
}
