package chaindb

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
)

// Tip is the tip of the selected chain.
func (db *DB) Tip() block.Tip {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.tip()
}

// ImmutableTip is the block K blocks behind the tip (Origin while the chain
// is shorter than that). Blocks up to it are final, and it never moves back:
// should a reopen cut the selection short (a parked block whose data went
// missing), it stays put until the tip is K ahead of it again.
func (db *DB) ImmutableTip() block.Tip {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.root.tip()
}

// TxsOnChain is the number of txs on the selected chain from origin through
// the tip, as Options.ApplyBlock counted them (ledger.Diff.Txs): a block that
// applies txs it does not carry, a certified closure, counts those. It is
// kept as blocks are applied, never recounted: the count through the
// immutable tip is stored with the immutable marker, and each volatile
// block's diff carries its own (recounted by the replay at Open).
func (db *DB) TxsOnChain() uint64 {
	db.mu.RLock()
	defer db.mu.RUnlock()
	n := db.rootTxs
	for _, s := range db.selected {
		n += uint64(s.diff.Txs)
	}
	return n
}

// CertRBsOnChain is the number of CertRBs on the selected chain from origin
// through the tip: the EBs the chain certifies. Kept like TxsOnChain: the
// count through the immutable tip is stored with the immutable marker, the
// volatile blocks' are counted from their headers.
func (db *DB) CertRBsOnChain() uint64 {
	db.mu.RLock()
	defer db.mu.RUnlock()
	n := db.rootCertRBs
	for _, s := range db.selected {
		if s.header.LeiosCertified {
			n++
		}
	}
	return n
}

// Abandoned returns the blocks of the chain that ended at old which are no
// longer on the selected chain, oldest first: what selection took off the
// chain since old was its tip. None if old is still on the selected chain,
// or no longer in the volatile tree (its fork was pruned as the immutable
// tip advanced). Never more than K blocks: old was a tip, and the walk ends
// at the immutable tip at the latest.
func (db *DB) Abandoned(old block.Tip) ([]*block.Block, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	var blocks []*block.Block
	for n := db.nodes[old.Point.Hash]; n != nil && !db.onSelected(n); n = n.parent {
		blk, err := db.readBlock(n.hash)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, blk)
	}
	slices.Reverse(blocks)
	return blocks, nil
}

// Block returns any stored block: on the selected chain or on a volatile fork.
func (db *DB) Block(hash block.Hash) (*block.Block, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	return db.readBlock(hash)
}

// BlockByNumber returns the selected chain's block numbered n (from 1).
func (db *DB) BlockByNumber(n uint64) (*block.Block, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	return db.selectedBlock(n)
}

// HeaderByNumber returns the header of the selected chain's block numbered
// n (from 1), without decoding its body; a volatile one from memory.
func (db *DB) HeaderByNumber(n uint64) (*block.Header, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	return db.selectedHeader(n)
}

// FindIntersect returns the first of points that is on the selected chain.
// Origin always is; ok=false if none is.
func (db *DB) FindIntersect(points []block.Point) (block.Point, bool) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return block.Origin, false
	}
	for _, p := range points {
		if _, err := db.selectedNumber(p); err == nil {
			return p, true
		}
	}
	return block.Origin, false
}

// BlockRange returns the selected chain's blocks from..to, both included and
// both on the selected chain. ErrNotFound if either point is not on it or to
// comes before from. It holds the whole range in memory: block fetch serves
// ranges with Blocks.
func (db *DB) BlockRange(from, to block.Point) ([]*block.Block, error) {
	blocks, err := db.Blocks(from, to)
	if err != nil {
		return nil, err
	}
	var out []*block.Block
	for blk, err := range blocks {
		if err != nil {
			return nil, err
		}
		out = append(out, blk)
	}
	return out, nil
}

// Blocks returns the selected chain's blocks from..to, as BlockRange does,
// but one at a time: the range is resolved at once, under the read lock
// (ErrNotFound as BlockRange), and each block is read and decoded only when
// the caller asks for it, under the lock for that read alone. So a range as
// long as the chain costs one block of memory, and no lock is held while
// the caller sends a block to a peer that reads slowly. The blocks are those
// of the selection when Blocks was called: the immutable ones by the number
// index, the volatile ones by the hashes it noted (at most k).
func (db *DB) Blocks(from, to block.Point) (iter.Seq2[*block.Block, error], error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	first, err := db.selectedNumber(from)
	if err != nil {
		return nil, err
	}
	last, err := db.selectedNumber(to)
	if err != nil {
		return nil, err
	}
	if first == 0 || last < first {
		return nil, fmt.Errorf("%w: range %s..%s", ErrNotFound, from, to)
	}
	immutable := db.root.number
	var volatile []block.Hash // the range's blocks above the immutable tip
	for n := max(first, immutable+1); n <= last; n++ {
		h, err := db.selectedHash(n)
		if err != nil {
			return nil, err
		}
		volatile = append(volatile, h)
	}
	return func(yield func(*block.Block, error) bool) {
		for n := first; n <= last; n++ {
			blk, err := db.rangeBlock(n, immutable, volatile, first)
			if !yield(blk, err) || err != nil {
				return
			}
		}
	}, nil
}

// rangeBlock reads block n of a range Blocks resolved: below or at the
// immutable tip of then by the number index, above it by the noted hash.
func (db *DB) rangeBlock(n, immutable uint64, volatile []block.Hash, first uint64) (*block.Block, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	if n > immutable {
		return db.readBlock(volatile[n-max(first, immutable+1)])
	}
	return db.selectedBlock(n)
}

// selectedNumber returns the block number of p if p is on the selected
// chain (Origin is, as number 0). Callers hold mu or addMu.
func (db *DB) selectedNumber(p block.Point) (uint64, error) {
	if p.IsOrigin() {
		return 0, nil
	}
	if n, ok := db.nodes[p.Hash]; ok {
		if db.onSelected(n) && n.slot == p.Slot {
			return n.number, nil
		}
		return 0, fmt.Errorf("%w: %s is not on the selected chain", ErrNotFound, p)
	}
	// An immutable block: check it against the number index.
	h, err := db.readHeader(p.Hash)
	if err != nil {
		return 0, err
	}
	if h.Slot != p.Slot || h.BlockNumber > db.root.number {
		return 0, fmt.Errorf("%w: %s is not on the selected chain", ErrNotFound, p)
	}
	sel, ok, err := get(db.store, numberKey(h.BlockNumber))
	if err != nil {
		return 0, fmt.Errorf("chaindb: %w", err)
	}
	if !ok || !bytes.Equal(sel, p.Hash[:]) {
		return 0, fmt.Errorf("%w: %s is not on the selected chain", ErrNotFound, p)
	}
	return h.BlockNumber, nil
}

// selectedHash returns the hash of the selected block numbered n (n ≥ 1).
// Callers hold mu or addMu.
func (db *DB) selectedHash(n uint64) (block.Hash, error) {
	switch tip := db.tipNode().number; {
	case n == 0 || n > tip:
		return block.Hash{}, fmt.Errorf("%w: block number %d (tip %d)", ErrNotFound, n, tip)
	case n > db.root.number:
		return db.selected[n-db.root.number-1].hash, nil
	case n == db.root.number:
		return db.root.hash, nil
	}
	sel, ok, err := get(db.store, numberKey(n))
	if err != nil {
		return block.Hash{}, fmt.Errorf("chaindb: %w", err)
	}
	if !ok || len(sel) != len(block.Hash{}) {
		return block.Hash{}, fmt.Errorf("chaindb: number index has no block %d below the immutable tip", n)
	}
	return block.Hash(sel), nil
}

func (db *DB) selectedBlock(n uint64) (*block.Block, error) {
	h, err := db.selectedHash(n)
	if err != nil {
		return nil, err
	}
	return db.readBlock(h)
}

// selectedHeader is selectedBlock for the header alone, served from memory
// for volatile blocks.
func (db *DB) selectedHeader(n uint64) (*block.Header, error) {
	if n > db.root.number && n <= db.tipNode().number {
		return db.selected[n-db.root.number-1].header, nil
	}
	h, err := db.selectedHash(n)
	if err != nil {
		return nil, err
	}
	return db.readHeader(h)
}

// readBlock reads a stored block. Callers hold mu or addMu (the store is open).
func (db *DB) readBlock(hash block.Hash) (*block.Block, error) {
	raw, ok, err := get(db.store, blockKey(hash))
	if err != nil {
		return nil, fmt.Errorf("chaindb: reading block %s: %w", hash.Short(), err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: block %s", ErrNotFound, hash.Short())
	}
	blk, err := block.DecodeBlock(raw)
	if err != nil {
		return nil, fmt.Errorf("chaindb: stored block %s: %w", hash.Short(), err)
	}
	return blk, nil
}

// readHeader reads a stored block's header without decoding its body.
func (db *DB) readHeader(hash block.Hash) (*block.Header, error) {
	raw, ok, err := get(db.store, blockKey(hash))
	if err != nil {
		return nil, fmt.Errorf("chaindb: reading block %s: %w", hash.Short(), err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: block %s", ErrNotFound, hash.Short())
	}
	var parts []block.RawCBOR
	if err := block.Unmarshal(raw, &parts); err != nil || len(parts) != 2 {
		return nil, fmt.Errorf("chaindb: stored block %s is malformed: %v", hash.Short(), err)
	}
	return block.DecodeHeader(parts[0])
}

// has reports whether key is stored.
func (db *DB) has(key []byte) (bool, error) {
	_, closer, err := db.store.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("chaindb: %w", err)
	}
	closer.Close()
	return true, nil
}
