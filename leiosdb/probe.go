package leiosdb

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/leiosnode/leiosnode/block"
)

// HasTxs is the batch membership probe: out[i] reports whether hashes[i] is
// a stored tx; it returns how many are. out must be as long as hashes.
//
// It reads the index of the volatile window's txs in memory (txindex.go),
// and what that does not hold (the txs of certified closures) with
// bloom-filtered SeekPrefixGE in ascending hash order on one iterator.
// BenchmarkProbe compares it with that probe alone, SeekPrefixGE in the
// caller's order, plain SeekGE, and one Get per hash.
func (db *DB) HasTxs(hashes []block.Hash, out []bool) (int, error) {
	if len(out) != len(hashes) {
		return 0, fmt.Errorf("leiosdb: HasTxs: %d results for %d hashes", len(out), len(hashes))
	}
	done, err := db.beginRead()
	if err != nil {
		return 0, err
	}
	defer done()
	index, err := db.txIndex()
	if err != nil {
		return 0, err
	}
	return index.held(db.store, hashes, out)
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
