package leiosdb

import (
	"fmt"

	"github.com/leiosnode/leiosnode/block"
)

// PointInfo is what the store knows of a point.
type PointInfo struct {
	Point    block.Point
	EbSize   uint64 // announced
	Promoted bool   // certified on the immutable chain; GC keeps it
	HasBody  bool   // the body is held (and has the announced size)
	Missing  int    // txs of the closure not stored; 0 unless HasBody
}

// Complete reports whether the point's whole closure is held.
func (i PointInfo) Complete() bool { return i.HasBody && i.Missing == 0 }

// PointInfo returns what is known of p; ok is false for an unknown point.
func (db *DB) PointInfo(p block.Point) (info PointInfo, ok bool, err error) {
	snap, done, err := db.beginSnapshot()
	if err != nil {
		return PointInfo{}, false, err
	}
	defer done()
	return pointInfo(snap, p)
}

func pointInfo(r reader, p block.Point) (PointInfo, bool, error) {
	rec, ok, err := readPoint(r, p)
	if err != nil || !ok {
		return PointInfo{}, false, err
	}
	info := PointInfo{Point: p, EbSize: rec.EbSize, Promoted: rec.Promoted}
	state, held, err := readBodyState(r, p.Hash)
	if err != nil {
		return PointInfo{}, false, err
	}
	if held && state.BodySize == rec.EbSize {
		info.HasBody = true
		info.Missing = int(state.Missing)
	}
	return info, true, nil
}

// Points lists the known points with slot ≥ fromSlot, in slot order: what a
// subscriber that was cut off reads to catch up.
func (db *DB) Points(fromSlot uint64) ([]PointInfo, error) {
	snap, done, err := db.beginSnapshot()
	if err != nil {
		return nil, err
	}
	defer done()
	var infos []PointInfo
	err = scanRange(snap, slotBound(prefixPoint, fromSlot), []byte{prefixPoint + 1}, func(k, _ []byte) (bool, error) {
		info, _, err := pointInfo(snap, parsePointKey(k))
		infos = append(infos, info)
		return err == nil, err
	})
	return infos, err
}

// Body returns the body bytes of ebHash, as received.
func (db *DB) Body(ebHash block.Hash) ([]byte, bool, error) {
	return db.get(hashKey(prefixBody, ebHash))
}

// Tx returns the bytes of a stored tx.
func (db *DB) Tx(txHash block.Hash) ([]byte, bool, error) { return db.get(hashKey(prefixTx, txHash)) }

// get returns a copy of key's value, guarded against Close.
func (db *DB) get(key []byte) ([]byte, bool, error) {
	done, err := db.beginRead()
	if err != nil {
		return nil, false, err
	}
	defer done()
	return getCopy(db.store, key)
}

// TxsByOffsets returns the txs at the given offsets of the body of ebHash,
// in the order asked (the fetch server answers a bitmap request with it).
// It fails with ErrNoBody, ErrOffset, or ErrTxMissing naming the first tx
// not stored.
func (db *DB) TxsByOffsets(ebHash block.Hash, offsets []int) ([][]byte, error) {
	return db.txsOf(ebHash, offsets, false)
}

// Closure returns every tx of the body of ebHash, in body order, or
// ErrTxMissing if the closure is not complete.
func (db *DB) Closure(ebHash block.Hash) ([][]byte, error) { return db.txsOf(ebHash, nil, true) }

// txsOf reads the txs at offsets of the body of ebHash, or with all the
// whole closure in order.
func (db *DB) txsOf(ebHash block.Hash, offsets []int, all bool) ([][]byte, error) {
	snap, done, err := db.beginSnapshot()
	if err != nil {
		return nil, err
	}
	defer done()
	entries, err := bodyEntries(snap, ebHash)
	if err != nil {
		return nil, err
	}
	if all {
		offsets = make([]int, len(entries))
		for i := range offsets {
			offsets[i] = i
		}
	}
	txs := make([][]byte, len(offsets))
	for j, i := range offsets {
		if i < 0 || i >= len(entries) {
			return nil, fmt.Errorf("%w: %d of EB %s with %d txs", ErrOffset, i, ebHash.Short(), len(entries))
		}
		tx, ok, err := getCopy(snap, hashKey(prefixTx, entries[i].TxHash))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: tx %d (%s) of EB %s", ErrTxMissing, i, entries[i].TxHash.Short(), ebHash.Short())
		}
		txs[j] = tx
	}
	return txs, nil
}

// Missing returns, ascending, the offsets of the txs of p's closure that are
// not stored: what the fetch client still has to ask for. It fails with
// ErrUnknownPoint or ErrNoBody.
func (db *DB) Missing(p block.Point) ([]int, error) {
	snap, done, err := db.beginSnapshot()
	if err != nil {
		return nil, err
	}
	defer done()
	info, ok, err := pointInfo(snap, p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownPoint, p)
	}
	if !info.HasBody {
		return nil, fmt.Errorf("%w: %s", ErrNoBody, p)
	}
	entries, err := bodyEntries(snap, p.Hash)
	if err != nil {
		return nil, err
	}
	if info.Missing == 0 {
		return nil, nil
	}
	index, err := db.txIndex()
	if err != nil {
		return nil, err
	}
	// The index may be newer than snap: a tx stored since is not missing.
	return index.missing(p.Hash, entries), nil
}

func bodyEntries(r reader, ebHash block.Hash) ([]block.EBTx, error) {
	raw, ok, err := getCopy(r, hashKey(prefixBody, ebHash))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: EB %s", ErrNoBody, ebHash.Short())
	}
	return storedTxs(raw)
}
