package mempool

import (
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/ledger"
)

// keyIndex is a posIndex of outputs as a lineage keeps it: the key at a
// position is keys[pos].
type keyIndex struct {
	x      posIndex
	keys   []ledger.TxIn
	shared bool
}

func (k *keyIndex) add(in ledger.TxIn) {
	k.x.store(keyHash(&in.TxID, in.Index), len(k.keys), k.shared)
	k.keys = append(k.keys, in)
}

// find looks in up among the first n keys.
func (k *keyIndex) find(in ledger.TxIn, n int) (int, bool) {
	keys := k.keys[:n]
	return k.x.find(keyHash(&in.TxID, in.Index), n, func(pos int) bool { return keys[pos] == in })
}

// A posIndex finds every key stored at a position below the bound asked
// for, at that position, and nothing else: whatever its tables (reserved
// or grown, merged or added).
func TestPosIndexFindsWhatWasStored(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := keyIndex{shared: rapid.Bool().Draw(t, "shared")}
		if rapid.Bool().Draw(t, "reserve") {
			k.x.reserve(rapid.IntRange(0, 200).Draw(t, "reserved"))
		}
		// Outputs of a few tx ids, so keys share ids and differ by index.
		ids := rapid.IntRange(1, 40).Draw(t, "ids")
		seen := map[ledger.TxIn]bool{}
		var absent []ledger.TxIn
		for range rapid.IntRange(0, 400).Draw(t, "keys") {
			var in ledger.TxIn
			in.TxID[0] = byte(rapid.IntRange(0, ids-1).Draw(t, "id"))
			in.Index = uint32(rapid.IntRange(0, 20).Draw(t, "index"))
			if seen[in] {
				continue
			}
			seen[in] = true
			if rapid.IntRange(0, 4).Draw(t, "absent") == 0 {
				absent = append(absent, in)
				continue
			}
			k.add(in)
		}
		bound := rapid.IntRange(0, len(k.keys)).Draw(t, "bound")
		for pos, in := range k.keys {
			got, ok := k.find(in, bound)
			if want := pos < bound; ok != want || ok && got != pos {
				t.Fatalf("find(%s) below %d = %d, %v; stored at %d", in, bound, got, ok, pos)
			}
		}
		for _, in := range absent {
			if pos, ok := k.find(in, len(k.keys)); ok {
				t.Fatalf("find(%s), never stored, = %d", in, pos)
			}
		}
	})
}

// Past mergeBelow entries a grow adds a table rather than copy them all;
// every key is still found, and the tables stay few.
func TestPosIndexPastTheMergeLimit(t *testing.T) {
	var k keyIndex
	keys := benchKeys(3 * mergeBelow)
	for _, in := range keys {
		k.add(in)
	}
	if n := len(*k.x.tables.Load()); n < 2 || n > 3 {
		t.Fatalf("%d tables for %d keys", n, len(keys))
	}
	for pos := 0; pos < len(keys); pos += 7 { // a sample: finds are slow under the race detector
		if got, ok := k.find(keys[pos], len(keys)); !ok || got != pos {
			t.Fatalf("find(%s) = %d, %v; stored at %d", keys[pos], got, ok, pos)
		}
	}
}

// Readers find every key published before they looked while the writer
// stores and grows: the race detector checks they read no slot or key
// being written.
func TestPosIndexReadersWhileWriting(t *testing.T) {
	keys := benchKeys(20_000)
	var x posIndex
	var published atomic.Int64 // a snapshot's length: keys below it are stored
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := range 2 {
		wg.Go(func() {
			i := r
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := int(published.Load())
				if n == 0 {
					continue
				}
				in := keys[i%n]
				got, ok := x.find(keyHash(&in.TxID, in.Index), n, func(pos int) bool { return keys[pos] == in })
				if !ok || got != i%n {
					t.Errorf("find(key %d) below %d = %d, %v", i%n, n, got, ok)
					return
				}
				i += 7919
			}
		})
	}
	for pos := range keys {
		x.store(keyHash(&keys[pos].TxID, keys[pos].Index), pos, true)
		published.Store(int64(pos + 1))
	}
	close(stop)
	wg.Wait()
}
