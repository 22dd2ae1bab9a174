package leiosdb

import (
	"fmt"

	"github.com/leiosnode/leiosnode/block"
)

// GCStats counts what GC deleted.
type GCStats struct {
	Points int // volatile points dropped
	Bodies int // bodies no remaining point named
	Txs    int // txs no remaining body named
}

// GC forgets the volatile (not promoted) points with slot < slot, the
// bodies no remaining point names, and the txs no remaining body names. Its
// cost is proportional to the garbage: it walks the slot-ordered volatile
// index up to slot and follows reference counts, never scanning txs.
//
// Each EB hash's points and body go in one batch, so a crash mid-GC leaves a
// consistent store that a later GC finishes. Callers evict the tx cache
// first (the hit-prune order, see the package doc).
func (db *DB) GC(slot uint64) (GCStats, error) {
	done, err := db.beginWrite()
	if err != nil {
		return GCStats{}, err
	}
	defer done()

	// Group the garbage points by EB hash, in slot order of first sight.
	var order []block.Hash
	groups := make(map[block.Hash][]block.Point)
	err = scanRange(db.store, slotBound(prefixVolatile, 0), slotBound(prefixVolatile, slot), func(k, _ []byte) (bool, error) {
		p := parsePointKey(k)
		if _, ok := groups[p.Hash]; !ok {
			order = append(order, p.Hash)
		}
		groups[p.Hash] = append(groups[p.Hash], p)
		return true, nil
	})
	if err != nil {
		return GCStats{}, fmt.Errorf("leiosdb: gc: %w", err)
	}

	var stats GCStats
	for _, eb := range order {
		bodyDropped, freed, err := db.dropPoints(eb, groups[eb])
		if err != nil {
			return stats, fmt.Errorf("leiosdb: gc of %s: %w", eb.Short(), err)
		}
		stats.Points += len(groups[eb])
		stats.Txs += freed
		if bodyDropped {
			stats.Bodies++
		}
	}
	if stats.Points > 0 {
		db.log.Debug("gc", "below_slot", slot, "points", stats.Points, "bodies", stats.Bodies, "txs", stats.Txs)
	}
	return stats, nil
}

// dropPoints deletes points (all of hash eb) in one batch, with the body if
// no other point names it. The caller holds writeMu.
func (db *DB) dropPoints(eb block.Hash, points []block.Point) (bodyDropped bool, freed int, err error) {
	b := db.store.NewBatch()
	defer b.Close()
	dropping := make(map[block.Point]bool, len(points))
	for _, p := range points {
		dropping[p] = true
		_ = b.Delete(pointKey(prefixPoint, p), nil)
		_ = b.Delete(pointKey(prefixVolatile, p), nil)
		_ = b.Delete(byHashKey(p), nil)
	}
	named := false
	err = scanPrefix(db.store, hashKey(prefixByHash, eb), func(k, _ []byte) (bool, error) {
		named = !dropping[parseByHashKey(k)]
		return !named, nil
	})
	if err != nil {
		return false, 0, err
	}
	index, err := db.txIndex()
	if err != nil {
		return false, 0, err
	}
	edit := index.edit()
	if !named {
		_, held, err := readBodyState(db.store, eb)
		if err != nil {
			return false, 0, err
		}
		if held {
			if freed, err = dropBody(db.store, b, edit, eb, nil); err != nil {
				return false, 0, err
			}
			bodyDropped = true
		}
	}
	if err := db.store.Commit(b, db.writeOpts); err != nil {
		return false, 0, err
	}
	edit.commit()
	return bodyDropped, freed, nil
}
