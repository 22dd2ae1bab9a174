package leiosdb

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
)

// Completion is the state of one point's closure after an insert.
type Completion struct {
	Point   block.Point
	Missing int // txs of the closure not stored yet
}

// Complete reports whether the whole closure is held.
func (c Completion) Complete() bool { return c.Missing == 0 }

// InsertPoint records an announcement: the EB at point p is ebSize bytes.
// Announcing a known point again with the same size is a no-op; with another
// size it fails with ErrConflictingPoint. If the body of p.Hash is already
// held (announced at another slot), ebSize must be its length
// (ErrSizeMismatch), and p holds it at once: subscribers get BodyStored(p),
// and ClosureComplete(p) if the closure is complete.
func (db *DB) InsertPoint(p block.Point, ebSize uint64) error {
	rec, known, done, err := db.beginPointWrite(p)
	if err != nil {
		return err
	}
	defer done()
	if known {
		if rec.EbSize != ebSize {
			return fmt.Errorf("%w: %s has %d bytes, announced again with %d", ErrConflictingPoint, p, rec.EbSize, ebSize)
		}
		return nil
	}
	state, held, err := readBodyState(db.store, p.Hash)
	if err != nil {
		return err
	}
	if held && state.BodySize != ebSize {
		return fmt.Errorf("%w: %s announced with %d bytes, the body held is %d", ErrSizeMismatch, p, ebSize, state.BodySize)
	}

	b := db.store.NewBatch()
	defer b.Close()
	_ = b.Set(pointKey(prefixPoint, p), pointRecord{EbSize: ebSize}.encode(), nil)
	_ = b.Set(pointKey(prefixVolatile, p), nil, nil)
	_ = b.Set(byHashKey(p), nil, nil)
	if err := db.store.Commit(b, db.writeOpts); err != nil {
		return fmt.Errorf("leiosdb: insert point %s: %w", p, err)
	}
	if held {
		events := []Event{{BodyStored, p}}
		if state.Missing == 0 {
			events = append(events, Event{ClosureComplete, p})
		}
		db.publish(events)
	}
	return nil
}

// InsertBody stores the EB body of the announced point p. The body must be
// ebSize bytes (ErrSizeMismatch), hash to p.Hash (ErrHashMismatch), pass
// block.DecodeEBBody under Options.Limits (block.ErrInvalidEB), and declare
// the right size for every tx already stored (ErrTxSizeMismatch). A body
// already held is not stored again.
//
// The returned completion counts the txs still missing; the body's txs
// already stored for other EBs of the volatile window count as held (a tx
// kept only for a certified closure counts as missing: see txIndex). Subscribers get BodyStored,
// and ClosureComplete if nothing is missing, for every point of p.Hash with
// the body's size.
func (db *DB) InsertBody(p block.Point, body []byte) (Completion, error) {
	rec, known, done, err := db.beginPointWrite(p)
	if err != nil {
		return Completion{}, err
	}
	defer done()
	if !known {
		return Completion{}, fmt.Errorf("%w: %s", ErrUnknownPoint, p)
	}
	if uint64(len(body)) != rec.EbSize {
		return Completion{}, fmt.Errorf("%w: %s announced with %d bytes, body has %d", ErrSizeMismatch, p, rec.EbSize, len(body))
	}
	if block.HashBytes(body) != p.Hash {
		return Completion{}, fmt.Errorf("%w: %s", ErrHashMismatch, p)
	}
	if state, held, err := readBodyState(db.store, p.Hash); err != nil || held {
		return Completion{Point: p, Missing: int(state.Missing)}, err
	}
	eb, err := block.DecodeEBBody(body, db.opts.Limits)
	if err != nil {
		return Completion{}, fmt.Errorf("leiosdb: body of %s: %w", p, err)
	}

	index, err := db.txIndex()
	if err != nil {
		return Completion{}, err
	}
	volatile := !rec.Promoted
	if volatile {
		if volatile, err = bodyVolatile(db.store, p.Hash); err != nil {
			return Completion{}, err
		}
	}
	b := db.store.NewBatch()
	defer b.Close()
	edit := index.edit()
	state := bodyState{BodySize: uint64(len(body))}
	for i, tx := range eb.Txs {
		held := edit.get(tx.TxHash)
		if !held.Indexed {
			state.Missing++
			edit.want(tx.TxHash, bodyWant{eb: p.Hash, Offset: uint64(i), Size: uint64(tx.Size)})
			continue
		}
		if held.Size != uint64(tx.Size) {
			return Completion{}, fmt.Errorf("%w: %s declares %d bytes for tx %s of %d bytes",
				ErrTxSizeMismatch, p, tx.Size, tx.TxHash.Short(), held.Size)
		}
		if volatile {
			held.Volatile++
		} else if !held.Pinned {
			held.Pinned = true
			_ = b.Set(hashKey(prefixPin, tx.TxHash), nil, nil)
		}
		edit.set(tx.TxHash, held.indexedTx)
	}
	_ = b.Set(hashKey(prefixBody, p.Hash), body, nil)
	_ = b.Set(hashKey(prefixBodyState, p.Hash), state.encode(), nil)
	if err := db.store.Commit(b, db.writeOpts); err != nil {
		return Completion{}, fmt.Errorf("leiosdb: insert body %s: %w", p, err)
	}
	edit.commit()

	holders, err := holdingPoints(db.store, p.Hash, state.BodySize)
	if err != nil {
		return Completion{}, err
	}
	events := make([]Event, 0, 2*len(holders))
	for _, q := range holders {
		events = append(events, Event{BodyStored, q})
		if state.Missing == 0 {
			events = append(events, Event{ClosureComplete, q})
		}
	}
	db.publish(events)
	return Completion{Point: p, Missing: int(state.Missing)}, nil
}

// Promote keeps the EB at p for good: it was certified on the immutable
// chain, and a syncing node needs its closure. GC never drops a promoted
// point, so its body and txs stay. Promoting twice is a no-op.
func (db *DB) Promote(p block.Point) error {
	rec, known, done, err := db.beginPointWrite(p)
	if err != nil {
		return err
	}
	defer done()
	if !known {
		return fmt.Errorf("%w: %s", ErrUnknownPoint, p)
	}
	if rec.Promoted {
		return nil
	}
	// The body, if held, may stop being volatile: its txs are then named
	// by one volatile body fewer, and pinned for good.
	volatile, err := bodyVolatile(db.store, p.Hash)
	if err != nil {
		return err
	}
	index, err := db.txIndex()
	if err != nil {
		return err
	}
	rec.Promoted = true
	b := db.store.NewBatch()
	defer b.Close()
	_ = b.Set(pointKey(prefixPoint, p), rec.encode(), nil)
	_ = b.Delete(pointKey(prefixVolatile, p), nil)
	edit := index.edit()
	if _, held, err := readBodyState(db.store, p.Hash); err != nil {
		return err
	} else if held && volatile {
		txs, err := bodyEntries(db.store, p.Hash)
		if err != nil {
			return err
		}
		for _, tx := range txs {
			held := edit.get(tx.TxHash)
			if !held.Indexed {
				continue // missing: pinned when it arrives
			}
			held.Volatile--
			if !held.Pinned {
				held.Pinned = true
				_ = b.Set(hashKey(prefixPin, tx.TxHash), nil, nil)
			}
			edit.set(tx.TxHash, held.indexedTx)
		}
	}
	if err := db.store.Commit(b, db.writeOpts); err != nil {
		return fmt.Errorf("leiosdb: promote %s: %w", p, err)
	}
	edit.commit()
	return nil
}

// dropBody deletes the body of ebHash, releasing its txs: a stored tx is
// held by one volatile body fewer, and deleted when no volatile body holds
// it and no pin keeps it; no missing tx is wanted by it any more, and the
// txs of justStored (stored in this batch, counted for other bodies only)
// are left as they are. It reads through r, which must see b's earlier
// writes, and returns the number of txs deleted.
func dropBody(r reader, b *pebble.Batch, index *indexEdit, ebHash block.Hash, justStored map[block.Hash]bool) (freed int, err error) {
	raw, ok, err := getCopy(r, hashKey(prefixBody, ebHash))
	if err != nil || !ok {
		return 0, err
	}
	txs, err := storedTxs(raw)
	if err != nil {
		return 0, err
	}
	volatile, err := bodyVolatile(r, ebHash)
	if err != nil {
		return 0, err
	}
	for _, tx := range txs {
		h := tx.TxHash
		held := index.get(h)
		switch {
		case justStored[h]:
		case !held.Indexed:
			index.unwant(h, ebHash) // missing, or kept for a certified closure
		case !volatile:
			// A promoted body dropped (it contradicted a tx's size): its
			// pin stays, harmless, with the tx it keeps.
		case held.Volatile > 1 || held.Pinned:
			held.Volatile--
			index.set(h, held.indexedTx)
		default:
			// No volatile body names it any more, and no promoted body did
			// while the index held it; one that did before (a tx named
			// again after its closure was certified) left its pin.
			pinned, err := has(r, hashKey(prefixPin, h))
			if err != nil {
				return 0, err
			}
			index.forget(h)
			if !pinned {
				_ = b.Delete(hashKey(prefixTx, h), nil)
				freed++
			}
		}
	}
	_ = b.Delete(hashKey(prefixBody, ebHash), nil)
	_ = b.Delete(hashKey(prefixBodyState, ebHash), nil)
	return freed, nil
}

// beginPointWrite is beginWrite, then the record of p as it stands. The
// caller must call done when finished, unless err is set.
func (db *DB) beginPointWrite(p block.Point) (rec pointRecord, known bool, done func(), err error) {
	if done, err = db.beginWrite(); err != nil {
		return rec, false, nil, err
	}
	if rec, known, err = readPoint(db.store, p); err != nil {
		done()
		return rec, false, nil, err
	}
	return rec, known, done, nil
}

func readPoint(r reader, p block.Point) (pointRecord, bool, error) {
	return readRecord(r, pointKey(prefixPoint, p), decodePointRecord)
}

func readBodyState(r reader, ebHash block.Hash) (bodyState, bool, error) {
	return readRecord(r, hashKey(prefixBodyState, ebHash), decodeBodyState)
}

// readRecord reads and decodes the record at key; ok is false if there is
// none.
func readRecord[T any](r reader, key []byte, decode func([]byte) (T, error)) (rec T, ok bool, err error) {
	v, ok, err := getCopy(r, key)
	if err != nil || !ok {
		return rec, false, err
	}
	rec, err = decode(v)
	return rec, err == nil, err
}

// holdingPoints lists the points of ebHash whose announced size is bodySize,
// in slot order.
func holdingPoints(r reader, ebHash block.Hash, bodySize uint64) ([]block.Point, error) {
	var points []block.Point
	err := scanPrefix(r, hashKey(prefixByHash, ebHash), func(k, _ []byte) (bool, error) {
		p := parseByHashKey(k)
		rec, ok, err := readPoint(r, p)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, fmt.Errorf("%w: index entry of %s without its point", ErrCorrupt, p)
		}
		if rec.EbSize == bodySize {
			points = append(points, p)
		}
		return true, nil
	})
	return points, err
}
