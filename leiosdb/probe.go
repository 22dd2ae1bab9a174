package leiosdb

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
)

// HasTxs is the batch membership probe: out[i] reports whether hashes[i] is
// a stored tx; it returns how many are. out must be as long as hashes.
//
// It probes the compact 't' keyspace (no tx bytes): SeekPrefixGE per hash,
// which skips every table whose bloom filter rules the hash out, in
// ascending hash order, so the seeks only move forward and reuse the blocks
// already positioned. Large batches are split into Options.ProbeWorkers
// contiguous ranges of that order, one iterator each. BenchmarkProbe
// compares it with plain SeekGE in the same order (no bloom filters),
// SeekPrefixGE in the caller's order, and one Get per hash; it was the
// fastest of the four.
func (db *DB) HasTxs(hashes []block.Hash, out []bool) (int, error) {
	if len(out) != len(hashes) {
		return 0, fmt.Errorf("leiosdb: HasTxs: %d results for %d hashes", len(out), len(hashes))
	}
	done, err := db.beginRead()
	if err != nil {
		return 0, err
	}
	defer done()
	clear(out)
	order := sortedOrder(hashes)
	workers := max(1, min(db.opts.ProbeWorkers, len(order)/minProbeRange))
	var g errgroup.Group
	for w := range workers {
		part := order[w*len(order)/workers : (w+1)*len(order)/workers]
		g.Go(func() error {
			// Each worker writes only its own indexes of out.
			return probeSorted(db.store, hashes, part, func(i int, _ []byte) error {
				out[i] = true
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	n := 0
	for _, held := range out {
		if held {
			n++
		}
	}
	return n, nil
}

// minProbeRange is the fewest hashes worth a probe worker of their own.
const minProbeRange = 2048

// probeTxRefs calls fn(i, value) for every hashes[i] present in the 't'
// keyspace of r, in ascending hash order; value is valid only during the
// call. It is the refcount read of body inserts and drops.
func probeTxRefs(r reader, hashes []block.Hash, fn func(i int, value []byte) error) error {
	return probeSorted(r, hashes, sortedOrder(hashes), fn)
}

// probeSorted is probeTxRefs over the hashes named by order, which is
// ascending.
func probeSorted(r reader, hashes []block.Hash, order []hashOrder, fn func(i int, value []byte) error) (err error) {
	if len(order) == 0 {
		return nil
	}
	it, err := r.NewIter(&pebble.IterOptions{
		LowerBound: []byte{prefixTxRef},
		UpperBound: []byte{prefixTxRef + 1},
	})
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
	for _, o := range order {
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

// hashOrder is a hash's place in ascending order: its first 8 bytes make
// most comparisons one integer compare.
type hashOrder struct {
	head  uint64
	index int
}

// sortedOrder returns the indexes of hashes in ascending hash order.
func sortedOrder(hashes []block.Hash) []hashOrder {
	order := make([]hashOrder, len(hashes))
	for i, h := range hashes {
		order[i] = hashOrder{binary.BigEndian.Uint64(h[:8]), i}
	}
	slices.SortFunc(order, func(a, b hashOrder) int {
		if c := cmp.Compare(a.head, b.head); c != 0 {
			return c
		}
		return bytes.Compare(hashes[a.index][8:], hashes[b.index][8:])
	})
	return order
}

// optTxRef is a tx ref that may be absent.
type optTxRef struct {
	txRef
	Stored bool
}

// readTxRefs reads the refs of hashes, in their order.
func readTxRefs(r reader, hashes []block.Hash) ([]optTxRef, error) {
	refs := make([]optTxRef, len(hashes))
	err := probeTxRefs(r, hashes, func(i int, v []byte) error {
		ref, err := decodeTxRef(v)
		refs[i] = optTxRef{ref, true}
		return err
	})
	return refs, err
}
