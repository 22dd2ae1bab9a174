package chaindb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// load rebuilds the in-memory state at Open: the root from the immutable
// marker, the selected volatile blocks from the number index up to the tip
// marker, the other volatile blocks from the volatile index, and the diffs by
// replaying the selected blocks (reapply) over the backing store.
func (db *DB) load() error {
	imm, err := db.readTip(keyImmutable)
	if err != nil {
		return err
	}
	if err := db.openImmutableMarker(imm); err != nil {
		return err
	}
	if db.rootTxs, err = db.readCount(keyImmutableTxs); err != nil {
		return err
	}
	if db.rootCertRBs, err = db.readCertRBs(imm); err != nil {
		return err
	}
	tip, err := db.readTip(keyTip)
	if err != nil {
		return err
	}
	if err := db.buildAddressIndex(); err != nil {
		return err
	}
	root := &node{}
	if !imm.Point.IsOrigin() {
		blk, err := db.readBlock(imm.Point.Hash)
		if err != nil {
			return fmt.Errorf("chaindb: immutable tip %s: %w", imm, err)
		}
		root = newNode(blk.Header)
	}
	db.root = root
	db.nodes[root.hash] = root

	fix := db.store.NewBatch() // repairs, written at the end
	defer fix.Close()

	// The selected chain after the immutable tip. The batches that write it
	// are atomic, so a break in it means corruption; keep what links.
	var blocks []*block.Block
	prev := root
	for number := root.number + 1; number <= tip.BlockNumber; number++ {
		blk, err := db.indexedBlock(number)
		if err != nil || blk.Header.Prev() != prev.hash || blk.Header.BlockNumber != number {
			db.log.Error("selected chain broken; truncating", "at", number, "err", err)
			for n := number; n <= tip.BlockNumber; n++ {
				fix.Delete(numberKey(n), nil)
			}
			break
		}
		n := newNode(blk.Header)
		n.attach(prev)
		db.nodes[n.hash] = n
		db.selected = append(db.selected, n)
		blocks = append(blocks, blk)
		prev = n
	}

	if err := db.loadForks(fix); err != nil {
		return err
	}

	// Replay. A failure means the ledger rules changed under stored blocks:
	// the block and its descendants are dropped as invalid.
	view := ledger.Overlay{Base: backingStore{db.store}}
	for i, blk := range blocks {
		d, err := db.opts.ApplyBlock(view, blk, db.selected[i].parent.header, true)
		if err != nil {
			bad := db.selected[i]
			for n := bad.number; n <= tip.BlockNumber; n++ {
				fix.Delete(numberKey(n), nil)
			}
			db.selected = db.selected[:i]
			if errors.Is(err, ErrNotReady) {
				// Its data went missing: keep the blocks, off the selection,
				// for Reselect.
				db.log.Warn("stored block not ready on replay; parked", "block", bad.tip(), "err", err)
				break
			}
			// The ledger rules changed under a stored block.
			db.log.Error("stored block fails on replay; dropping it and its descendants", "block", bad.tip(), "err", err)
			for _, x := range bad.subtree() {
				db.invalid[x.hash] = x.number
				delete(db.nodes, x.hash)
				fix.Delete(blockKey(x.hash), nil)
				fix.Delete(volatileKey(x.number, x.hash), nil)
			}
			bad.detach()
			break
		}
		if d == nil {
			d = ledger.NewDiff()
		}
		db.selected[i].setDiff(d, createdByAddress(d))
		view.Diffs = append(view.Diffs, d)
	}
	if db.tip() != tip {
		fix.Set(keyTip, encodeTip(db.tip()), nil)
	}
	if !fix.Empty() {
		if err := db.store.Commit(fix, pebble.Sync); err != nil {
			return fmt.Errorf("chaindb: repair: %w", err)
		}
	}

	// K may be smaller than in the last run: flush what is now immutable.
	c := &change{batch: db.store.NewBatch(), intersect: db.tipNode()}
	defer c.batch.Close()
	diffs := db.diffsThrough(db.tipNode())
	db.planAdvance(c, db.selected, diffs)
	if c.cut > 0 {
		if err := db.commit(c, syncSelection); err != nil {
			return err
		}
	}
	if db.tip() != tip {
		// The selection was cut short: another stored chain may be longer.
		if _, err := db.reselect(); err != nil {
			db.log.Warn("chain selection at open", "err", err)
		}
	}
	return nil
}

// checkStored is what Open refuses a stored database for, checked on the
// store opened read-only before it is opened for writing (Open's
// pebblestore.Options.Check): its markers and count, the immutable tip
// against its marker file, the immutable tip's block. What load repairs
// or upgrades is not refused.
func (db *DB) checkStored() error {
	imm, err := db.readTip(keyImmutable)
	if err != nil {
		return err
	}
	if _, err := db.readCount(keyImmutableTxs); err != nil {
		return err
	}
	if _, err := db.readTip(keyTip); err != nil {
		return err
	}
	m, value, err := db.store.Marker(immutableMarker)
	if err != nil {
		return err
	}
	err = db.checkImmutableMark(imm, value)
	m.Close()
	if err != nil {
		return err
	}
	if !imm.Point.IsOrigin() {
		if _, err := db.readBlock(imm.Point.Hash); err != nil {
			return fmt.Errorf("chaindb: immutable tip %s: %w", imm, err)
		}
	}
	return nil
}

// loadForks attaches the stored volatile blocks off the selected chain. The
// volatile index is in block-number order, so parents come before children;
// entries that no longer descend from the root are deleted.
func (db *DB) loadForks(fix *pebble.Batch) error {
	it, err := db.store.NewIter(prefixBounds(prefixVolatile))
	if err != nil {
		return fmt.Errorf("chaindb: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		key := it.Key()
		if len(key) != 1+8+32 {
			return fmt.Errorf("chaindb: malformed volatile key %x", key)
		}
		number := binary.BigEndian.Uint64(key[1:9])
		hash := block.Hash(key[9:])
		if _, ok := db.nodes[hash]; ok {
			continue
		}
		blk, err := db.readBlock(hash)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		var parent *node
		if err == nil {
			parent = db.nodes[blk.Header.Prev()]
		}
		if parent == nil || number != parent.number+1 || number <= db.root.number {
			fix.Delete(volatileKey(number, hash), nil)
			if sel, _, _ := get(db.store, numberKey(number)); !bytes.Equal(sel, hash[:]) {
				fix.Delete(blockKey(hash), nil)
			}
			continue
		}
		n := newNode(blk.Header)
		n.attach(parent)
		db.nodes[hash] = n
	}
	return it.Error()
}

// writeGenesis adds to a new database's first batch the genesis UTxO, its
// address index and the origin markers.
func writeGenesis(b *pebble.Batch, g ledger.MapUTxO) {
	for in, out := range g {
		b.Set(utxoKey(in), ledger.EncodeTxOut(out), nil)
		indexOutput(b, in, out)
	}
	b.Set(keyAddressIndex, nil, nil)
	origin := encodeTip(block.Tip{Point: block.Origin})
	b.Set(keyImmutable, origin, nil)
	b.Set(keyImmutableTxs, encodeCount(0), nil)
	b.Set(keyImmutableCertRBs, encodeCount(0), nil)
	b.Set(keyTip, origin, nil)
}

func (db *DB) readTip(key []byte) (block.Tip, error) {
	raw, ok, err := get(db.store, key)
	if err != nil {
		return block.Tip{}, fmt.Errorf("chaindb: %w", err)
	}
	if !ok {
		return block.Tip{}, fmt.Errorf("chaindb: marker %q missing", key)
	}
	return decodeTip(raw)
}

// readCertRBs reads the count of CertRBs through the immutable tip imm. A
// database written before it was kept lacks it: its immutable headers are
// counted once (headers only, no bodies) and the count written.
func (db *DB) readCertRBs(imm block.Tip) (uint64, error) {
	raw, ok, err := get(db.store, keyImmutableCertRBs)
	if err != nil {
		return 0, fmt.Errorf("chaindb: %w", err)
	}
	if ok {
		return decodeCount(raw)
	}
	var n uint64
	for number := uint64(1); number <= imm.BlockNumber; number++ {
		hash, ok, err := get(db.store, numberKey(number))
		if err != nil || !ok || len(hash) != len(block.Hash{}) {
			return 0, fmt.Errorf("chaindb: counting CertRBs: number index has no block %d (%v)", number, err)
		}
		h, err := db.readHeader(block.Hash(hash))
		if err != nil {
			return 0, err
		}
		if h.LeiosCertified {
			n++
		}
	}
	b := db.store.NewBatch()
	defer b.Close()
	b.Set(keyImmutableCertRBs, encodeCount(n), nil)
	if err := db.store.Commit(b, pebble.Sync); err != nil {
		return 0, fmt.Errorf("chaindb: %w", err)
	}
	db.log.Info("counted the CertRBs of the immutable chain once", "certRBs", n, "immutableTip", imm)
	return n, nil
}

// readCount reads a count marker. A database written before the txs on
// chain were counted lacks it and is refused: counting its history would be
// the walk from origin the count exists to avoid.
func (db *DB) readCount(key []byte) (uint64, error) {
	raw, ok, err := get(db.store, key)
	if err != nil {
		return 0, fmt.Errorf("chaindb: %w", err)
	}
	if !ok {
		return 0, fmt.Errorf("chaindb: marker %q missing: the database predates it; start from an empty directory", key)
	}
	return decodeCount(raw)
}

// indexedBlock reads the block the number index names for number.
func (db *DB) indexedBlock(number uint64) (*block.Block, error) {
	hash, ok, err := get(db.store, numberKey(number))
	if err != nil {
		return nil, fmt.Errorf("chaindb: %w", err)
	}
	if !ok || len(hash) != len(block.Hash{}) {
		return nil, fmt.Errorf("%w: number index has no block %d", ErrNotFound, number)
	}
	return db.readBlock(block.Hash(hash))
}
