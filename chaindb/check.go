package chaindb

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
)

// Check verifies the database in dir without writing to it: Pebble's own
// checks of every table (pebblestore.DB.Verify), then the chain's: its
// markers decode; the selected chain is linked and numbered from 1 to the
// tip, each block decoding and matching its body (and valid, with
// Options.ValidateBlock); the immutable tip is on it and not behind its
// marker file; every volatile index entry names a stored block after the
// immutable tip; the address index holds exactly the backing store's
// outputs. It does not replay the ledger (Open replays the volatile
// blocks). A database a running node holds cannot be checked
// (pebblestore.ErrInUse). Options.Network must be the database's;
// ApplyBlock is not used.
func Check(dir string, opts Options) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	opts.AcceptLostImmutableTip = false // Check reports what Open would refuse
	store, err := openStore(dir, opts, true)
	if err != nil {
		return err
	}
	db := &DB{opts: opts, log: opts.Logger, store: store}
	defer db.closeStore()
	if err := store.Verify(); err != nil {
		return err
	}
	switch err := db.checkChain(); {
	case errors.Is(err, errNoAddressIndex):
		return err // not a fault: Open builds the index
	case err != nil:
		return store.Corrupt(err)
	}
	return nil
}

// checkChain is Check's walk of the chain.
func (db *DB) checkChain() error {
	imm, err := db.readTip(keyImmutable)
	if err != nil {
		return err
	}
	tip, err := db.readTip(keyTip)
	if err != nil {
		return err
	}
	if _, err := db.readCount(keyImmutableTxs); err != nil {
		return err
	}
	if err := db.openImmutableMarker(imm); err != nil {
		return err
	}
	var prev *block.Header
	for number := uint64(1); number <= tip.BlockNumber; number++ {
		blk, err := db.indexedBlock(number)
		if err != nil {
			return fmt.Errorf("selected block #%d: %w", number, err)
		}
		h := blk.Header
		if h.BlockNumber != number || (prev == nil) != (h.PrevHash == nil) || prev != nil && h.Prev() != prev.Hash() {
			return fmt.Errorf("selected block #%d %s does not follow block #%d", number, h.Hash().Short(), number-1)
		}
		if err := blk.CheckBody(); err != nil {
			return fmt.Errorf("selected block #%d: %w", number, err)
		}
		if db.opts.ValidateBlock != nil {
			if err := db.opts.ValidateBlock(blk); err != nil {
				return fmt.Errorf("selected block #%d: %w", number, err)
			}
		}
		if number == imm.BlockNumber && h.Hash() != imm.Point.Hash {
			return fmt.Errorf("the immutable tip %s is not on the selected chain", imm)
		}
		prev = h
	}
	if prev != nil && tip.Point != prev.Point() {
		return fmt.Errorf("the tip marker %s is not the selected chain's last block", tip)
	}
	if imm.BlockNumber > tip.BlockNumber {
		return fmt.Errorf("the immutable tip %s is past the tip %s", imm, tip)
	}
	if err := db.checkVolatileIndex(imm); err != nil {
		return err
	}
	return db.checkAddressIndex()
}

// checkVolatileIndex: every entry names a stored block, by its number,
// after the immutable tip.
func (db *DB) checkVolatileIndex(imm block.Tip) error {
	it, err := db.store.NewIter(prefixBounds(prefixVolatile))
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		key := it.Key()
		if len(key) != 1+8+32 {
			return fmt.Errorf("malformed volatile index key %x", key)
		}
		number := binary.BigEndian.Uint64(key[1:9])
		hdr, err := db.readHeader(block.Hash(key[9:]))
		if err != nil {
			return fmt.Errorf("volatile index entry #%d: %w", number, err)
		}
		if hdr.BlockNumber != number || number <= imm.BlockNumber {
			return fmt.Errorf("volatile index entry #%d names block #%d %s (immutable tip %s)", number, hdr.BlockNumber, hdr.Hash().Short(), imm)
		}
	}
	return it.Error()
}

// CertifiedEBs returns the points of the EBs the selected chain of the
// stopped store in dir certifies, oldest first, without writing to it: for
// `leiosnode db check`, which compares them with the LeiosDB.
func CertifiedEBs(dir string, opts Options) ([]block.Point, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	store, err := openStore(dir, opts, true)
	if err != nil {
		return nil, err
	}
	db := &DB{opts: opts, log: opts.Logger, store: store}
	defer db.closeStore()
	tip, err := db.readTip(keyTip)
	if err != nil {
		return nil, err
	}
	var certified []block.Point
	var parent *block.Header
	for number := uint64(1); number <= tip.BlockNumber; number++ {
		hash, ok, err := get(db.store, numberKey(number))
		if err != nil || !ok || len(hash) != len(block.Hash{}) {
			return nil, fmt.Errorf("chaindb: number index has no block %d (%v)", number, err)
		}
		h, err := db.readHeader(block.Hash(hash))
		if err != nil {
			return nil, err
		}
		if pt, ok := consensus.CertifiedByHeader(h, parent); ok {
			certified = append(certified, pt)
		}
		parent = h
	}
	return certified, nil
}
