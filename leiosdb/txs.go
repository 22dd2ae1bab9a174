package leiosdb

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
)

// TxsResult is what InsertTxs did.
type TxsResult struct {
	// Completed lists the points whose closures became complete, by EB hash
	// then slot.
	Completed []Completion
	// Stored counts the txs stored. The others were ignored: already stored,
	// named by no held body, or repeated in the call.
	Stored int
	// Dropped lists the EB bodies deleted because a tx contradicted the size
	// they declared for it: such a body can never have a valid closure. Their
	// points stay, without a body; whoever sent the body sent an invalid EB.
	Dropped []block.Hash
}

// InsertTxs stores txs of held bodies' closures, each identified by its
// Blake2b-256 hash (computed once by whoever took the bytes in: the caller
// vouches that each Hash is its Bytes' hash), each stored once however
// many bodies name it. For every held body that misses a tx, the tx is
// discharged; closures that become complete are reported, and subscribers
// get ClosureComplete for their points.
//
// A tx that no held body misses is ignored, not refused: the fetch client
// only asks for named txs and the forge inserts the body first, so such a tx
// is a late reply for an EB that GC dropped or that another peer completed.
func (db *DB) InsertTxs(txs []block.HashedTx) (TxsResult, error) {
	done, err := db.beginWrite()
	if err != nil {
		return TxsResult{}, err
	}
	defer done()

	// An indexed batch, because a body dropped in this batch reads what
	// this batch wrote.
	txIndex, err := db.txIndex()
	if err != nil {
		return TxsResult{}, err
	}
	b := db.store.NewIndexedBatch()
	defer b.Close()
	index := txIndex.edit()

	hashes := make([]block.Hash, 0, len(txs))
	distinct := make([][]byte, 0, len(txs))
	seen := make(map[block.Hash]bool, len(txs))
	for _, tx := range txs {
		if !seen[tx.Hash] {
			seen[tx.Hash] = true
			hashes, distinct = append(hashes, tx.Hash), append(distinct, tx.Bytes)
		}
	}
	arrived := make(map[block.Hash]uint64) // body → txs of it stored here
	bad := make(map[block.Hash]bool)       // body → contradicted
	stored, err := storeTxs(b, index, hashes, distinct, arrived, bad)
	if err != nil {
		return TxsResult{}, err
	}

	completed, err := discharge(b, arrived, bad)
	if err != nil {
		return TxsResult{}, err
	}
	var res TxsResult
	justStored := make(map[block.Hash]bool, len(stored))
	for _, h := range stored {
		justStored[h] = true
	}
	for _, eb := range sortedHashes(bad) {
		if _, err := dropBody(b, b, index, eb, justStored); err != nil {
			return TxsResult{}, err
		}
		res.Dropped = append(res.Dropped, eb)
	}
	res.Stored = len(stored)

	var events []Event
	for _, eb := range completed {
		state, _, err := readBodyState(b, eb)
		if err != nil {
			return TxsResult{}, err
		}
		points, err := holdingPoints(b, eb, state.BodySize)
		if err != nil {
			return TxsResult{}, err
		}
		for _, p := range points {
			res.Completed = append(res.Completed, Completion{Point: p})
			events = append(events, Event{ClosureComplete, p})
		}
	}
	if b.Empty() {
		return res, nil
	}
	if err := db.store.Commit(b, db.writeOpts); err != nil {
		return TxsResult{}, fmt.Errorf("leiosdb: insert txs: %w", err)
	}
	index.commit()
	for _, eb := range res.Dropped {
		db.log.Warn("EB body dropped: a tx contradicts its declared size", "eb", eb.String())
	}
	db.publish(events)
	return res, nil
}

// storeTxs stores into b each of txs (hashes[i] the hash of txs[i], all
// distinct) that some held body misses, and counts it in arrived for the
// bodies whose declared size it matches; a body it contradicts goes in bad.
// The index counts, for each tx stored, the volatile bodies it arrived
// for, and a promoted one among them pins it; a bad body, about to be
// dropped, counts for none, and a tx only bad bodies want is not stored.
// It returns the hashes stored, in hash order (the order Pebble's memtable
// likes best).
func storeTxs(b *pebble.Batch, index *indexEdit, hashes []block.Hash, txs [][]byte, arrived map[block.Hash]uint64, bad map[block.Hash]bool) ([]block.Hash, error) {
	order := sortedOrder(hashes)
	for _, o := range order {
		for _, w := range index.wantsOf(hashes[o.index]) {
			if w.Size != uint64(len(txs[o.index])) {
				bad[w.eb] = true
			}
		}
	}
	volatile := make(map[block.Hash]bool) // body → no promoted point names it
	var stored []block.Hash
	for _, o := range order {
		h, tx := hashes[o.index], txs[o.index]
		held := indexedTx{Size: uint64(len(tx))}
		good := false
		for _, w := range index.wantsOf(h) {
			if bad[w.eb] {
				continue
			}
			good = true
			arrived[w.eb]++
			v, ok := volatile[w.eb]
			if !ok {
				var err error
				if v, err = bodyVolatile(b, w.eb); err != nil {
					return nil, err
				}
				volatile[w.eb] = v
			}
			if v {
				held.Volatile++
			} else {
				held.Pinned = true
			}
		}
		if !good {
			continue // held already, named by no held body, or only by bad ones
		}
		stored = append(stored, h)
		index.wantedNoMore(h)
		_ = b.Set(hashKey(prefixTx, h), tx, nil)
		if held.Pinned {
			_ = b.Set(hashKey(prefixPin, h), nil, nil)
		}
		index.set(h, held)
	}
	return stored, nil
}

// discharge lowers the missing counts of the bodies txs arrived for (except
// the contradicted ones, about to be dropped) and returns the bodies whose
// closures became complete, in hash order.
func discharge(b *pebble.Batch, arrived map[block.Hash]uint64, bad map[block.Hash]bool) ([]block.Hash, error) {
	var completed []block.Hash
	for _, eb := range sortedHashes(arrived) {
		if bad[eb] {
			continue
		}
		state, ok, err := readBodyState(b, eb)
		if err != nil {
			return nil, err
		}
		if !ok || state.Missing < arrived[eb] {
			return nil, fmt.Errorf("%w: body %s misses %d txs, %d arrived", ErrCorrupt, eb.Short(), state.Missing, arrived[eb])
		}
		state.Missing -= arrived[eb]
		_ = b.Set(hashKey(prefixBodyState, eb), state.encode(), nil)
		if state.Missing == 0 {
			completed = append(completed, eb)
		}
	}
	return completed, nil
}

func sortedHashes[V any](m map[block.Hash]V) []block.Hash {
	hs := make([]block.Hash, 0, len(m))
	for h := range m {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b block.Hash) int { return bytes.Compare(a[:], b[:]) })
	return hs
}
