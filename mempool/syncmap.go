package mempool

import "sync"

// indexMap is a typed sync.Map: its Load takes no lock (Go's sync.Map is a
// concurrent hash trie), so the rejected set is read while the add lock's
// holder remembers and forgets. A lineage's indexes, append-only and
// rebuilt at every sync, use the cheaper posIndex.
type indexMap[K comparable, V any] struct{ m sync.Map }

func (x *indexMap[K, V]) load(k K) (V, bool) {
	v, ok := x.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (x *indexMap[K, V]) store(k K, v V) { x.m.Store(k, v) }

func (x *indexMap[K, V]) delete(k K) { x.m.Delete(k) }
