package chaindb

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// AddResult is what AddBlock did to the selection.
type AddResult struct {
	Adopted    bool      // the selection changed (to a chain ending in the block)
	Tip        block.Tip // the selected tip after the call
	RolledBack int       // blocks dropped from the old selection (0 when it was only extended)
}

// AddBlock stores blk and runs chain selection: the longest chain wins; of
// two as long, the one whose tip has the lower leader VRF output when the
// tips are at most Options.TiebreakSlots apart, else the current selection
// (preferred). A block already stored is a no-op. A chain
// held back by a parked block (ErrNotReady) is stored without an error; see
// Reselect. Calls are serialized; readers are blocked only while the result
// is committed.
//
// Errors (wrapped with detail): ErrInvalidBlock if blk or an ancestor failed
// validation, ErrUnknownPredecessor, ErrForkTooDeep, ErrClosed, or a storage
// error.
func (db *DB) AddBlock(blk *block.Block) (AddResult, error) {
	db.addMu.Lock()
	defer db.addMu.Unlock()
	if db.closed {
		return AddResult{}, ErrClosed
	}
	res := AddResult{Tip: db.tip()}
	parent, dup, err := db.admit(blk)
	if err != nil || dup {
		return res, err
	}
	added := newNode(blk.Header)
	if !db.preferred(added, db.tipNode()) {
		// Not preferred to the selection: store it, validate it only if it
		// ever becomes part of a preferred chain.
		c := &change{batch: db.store.NewBatch(), added: added, parent: parent}
		defer c.batch.Close()
		storeBlock(c.batch, added, blk)
		return res, db.commit(c, noSyncStore)
	}
	return db.switchTo(added, parent, blk)
}

// admit checks blk against what is known before any ledger work: duplicates,
// known-invalid blocks and ancestors, the predecessor, block number and slot
// order, the body against the header, and Options.ValidateBlock. It returns
// the predecessor's node, or dup=true if blk is already stored.
func (db *DB) admit(blk *block.Block) (parent *node, dup bool, err error) {
	h := blk.Header
	hash := h.Hash()
	if _, ok := db.nodes[hash]; ok {
		return nil, true, nil
	}
	if _, ok := db.invalid[hash]; ok {
		return nil, false, fmt.Errorf("%w: block %d %s is known invalid", ErrInvalidBlock, h.BlockNumber, hash.Short())
	}
	if stored, err := db.has(blockKey(hash)); err != nil || stored {
		return nil, stored, err // an immutable block already on the selected chain
	}
	if _, ok := db.invalid[h.Prev()]; ok {
		db.invalid[hash] = h.BlockNumber
		return nil, false, fmt.Errorf("%w: block %d %s: predecessor %s is invalid", ErrInvalidBlock, h.BlockNumber, hash.Short(), h.Prev().Short())
	}
	parent = db.nodes[h.Prev()]
	if parent == nil || (h.PrevHash == nil) != (parent.header == nil) {
		stored, err := db.has(blockKey(h.Prev()))
		switch {
		case err != nil:
			return nil, false, err
		case stored || h.BlockNumber <= db.root.number:
			return nil, false, fmt.Errorf("%w: block %d %s forks off before the immutable tip %s",
				ErrForkTooDeep, h.BlockNumber, hash.Short(), db.root.tip())
		default:
			return nil, false, fmt.Errorf("%w: block %d %s, predecessor %s", ErrUnknownPredecessor, h.BlockNumber, hash.Short(), h.Prev().Short())
		}
	}
	if h.BlockNumber != parent.number+1 {
		db.invalid[hash] = h.BlockNumber
		return nil, false, fmt.Errorf("%w: block %s numbered %d after block %d", ErrInvalidBlock, hash.Short(), h.BlockNumber, parent.number)
	}
	if parent.header != nil && h.Slot <= parent.slot {
		db.invalid[hash] = h.BlockNumber
		return nil, false, fmt.Errorf("%w: block %d %s at slot %d, not after its predecessor's slot %d", ErrInvalidBlock, h.BlockNumber, hash.Short(), h.Slot, parent.slot)
	}
	// A body that does not match its header says nothing about the header:
	// the right body may still come from an honest peer, so this is not
	// remembered.
	if err := blk.CheckBody(); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrInvalidBlock, err)
	}
	if db.opts.ValidateBlock != nil {
		if err := db.opts.ValidateBlock(blk); err != nil {
			db.invalid[hash] = h.BlockNumber
			return nil, false, fmt.Errorf("%w: block %d %s: %w", ErrInvalidBlock, h.BlockNumber, hash.Short(), err)
		}
	}
	return parent, false, nil
}

// switchTo tries to select the chain ending in target, which is preferred to
// the selection: roll back to the intersection, apply the fork's blocks, and
// adopt the longest valid prefix if it is still preferred to the selection.
// blk is target's block if target is new (not yet in the tree; parent is its
// predecessor's node), nil if target is a stored leaf (Reselect).
func (db *DB) switchTo(target, parent *node, blk *block.Block) (AddResult, error) {
	oldTip := db.tipNode()
	path := []*node{target}
	intersect := parent
	for !db.onSelected(intersect) {
		path = append(path, intersect)
		intersect = intersect.parent
	}
	slices.Reverse(path)

	// The ledger after the intersection: the live backing store is safe to
	// read here, as only AddBlock writes it and we hold addMu.
	view := ledger.Overlay{Base: backingStore{db.store}, Diffs: db.diffsThrough(intersect)}
	var pathDiffs []*ledger.Diff
	var pathCreated []map[string][]ledger.TxIn
	var failed *node
	var applyErr error
	for _, n := range path {
		b := blk
		if n != target || blk == nil {
			var err error
			if b, err = db.readBlock(n.hash); err != nil {
				return AddResult{Tip: oldTip.tip()}, err
			}
		}
		d, err := db.opts.ApplyBlock(view, b, parentOf(n, target, parent).header, false)
		if err != nil {
			failed, applyErr = n, err
			break
		}
		if d == nil {
			d = ledger.NewDiff()
		}
		pathDiffs = append(pathDiffs, d)
		pathCreated = append(pathCreated, createdByAddress(d))
		view.Diffs = append(view.Diffs, d)
	}

	c := &change{batch: db.store.NewBatch(), parent: parent}
	defer c.batch.Close()
	parked := errors.Is(applyErr, ErrNotReady)
	var invalidErr error
	switch {
	case failed == nil || parked:
		if parked {
			db.log.Info("block parked until its data is complete", "block", failed.tip(), "err", applyErr)
		}
		if blk != nil {
			c.added = target
			storeBlock(c.batch, target, blk)
		}
	default:
		db.log.Warn("block failed ledger validation", "block", failed.tip(), "err", applyErr)
		invalidErr = fmt.Errorf("%w: block %d %s: %w", ErrInvalidBlock, failed.number, failed.hash.Short(), applyErr)
		if blk != nil {
			c.invalid = []*node{target} // a descendant of failed not in the tree yet
		}
		if failed != target || blk == nil {
			for _, n := range failed.subtree() {
				c.invalid = append(c.invalid, n)
				c.batch.Delete(blockKey(n.hash), nil)
				c.batch.Delete(volatileKey(n.number, n.hash), nil)
			}
		}
	}

	path = path[:len(pathDiffs)]
	if len(path) == 0 || !db.preferred(path[len(path)-1], oldTip) {
		return AddResult{Tip: oldTip.tip()}, errors.Join(invalidErr, db.commit(c, noSyncStore))
	}

	c.intersect, c.path, c.pathDiffs, c.pathCreated = intersect, path, pathDiffs, pathCreated
	for _, n := range path {
		c.batch.Set(numberKey(n.number), n.hash[:], nil)
	}
	newTip := path[len(path)-1]
	c.batch.Set(keyTip, encodeTip(newTip.tip()), nil)
	keep := intersect.number - db.root.number
	db.planAdvance(c, append(slices.Clone(db.selected[:keep]), path...),
		append(db.diffsThrough(intersect), pathDiffs...))
	if err := db.commit(c, syncSelection); err != nil {
		return AddResult{Tip: oldTip.tip()}, err
	}
	rolledBack := int(oldTip.number - intersect.number)
	if rolledBack > 0 {
		db.log.Info("switched to a fork", "tip", newTip.tip(), "rolled_back", rolledBack, "intersection", intersect.tip())
	} else {
		db.log.Debug("extended the selection", "tip", newTip.tip())
	}
	return AddResult{Adopted: true, Tip: newTip.tip(), RolledBack: rolledBack}, invalidErr
}

// preferred reports whether the chain ending in a is preferred to the one
// ending in b: it is longer, or as long with a tip of a lower leader VRF
// output at most Options.TiebreakSlots slots from b's. The same issuer in
// one slot has one VRF output: its two blocks tie, and b stays.
func (db *DB) preferred(a, b *node) bool {
	if a.number != b.number {
		return a.number > b.number
	}
	if a.header == nil || b.header == nil || max(a.slot, b.slot)-min(a.slot, b.slot) > db.opts.TiebreakSlots {
		return false
	}
	return bytes.Compare(a.header.VRF.Output[:], b.header.VRF.Output[:]) < 0
}

// parentOf is n's parent node on a path to target: a new target (not in
// the tree yet) has newParent, every other node its own.
func parentOf(n, target, newParent *node) *node {
	if n == target && n.parent == nil {
		return newParent
	}
	return n.parent
}

// Reselect runs chain selection again over the stored chains preferred to
// the selection: those held back by a parked block (ErrNotReady). Call it
// when data a parked block waited for has arrived. Longest chains are tried
// first; AddResult sums up the change from the selection before the call.
func (db *DB) Reselect() (AddResult, error) {
	db.addMu.Lock()
	defer db.addMu.Unlock()
	if db.closed {
		return AddResult{}, ErrClosed
	}
	return db.reselect()
}

// reselect is Reselect for callers holding addMu (and Open).
func (db *DB) reselect() (AddResult, error) {
	start := db.tipNode()
	var leaves []*node
	for _, n := range db.nodes {
		if len(n.children) == 0 && db.preferred(n, start) {
			leaves = append(leaves, n)
		}
	}
	slices.SortFunc(leaves, func(a, b *node) int { // longest first, then a fixed order
		if a.number != b.number {
			return cmp.Compare(b.number, a.number)
		}
		return bytes.Compare(a.hash[:], b.hash[:])
	})
	var errs []error
	for _, leaf := range leaves {
		if db.nodes[leaf.hash] != leaf || !db.preferred(leaf, db.tipNode()) {
			continue // dropped as invalid or pruned meanwhile, or no longer preferred
		}
		if _, err := db.switchTo(leaf, leaf.parent, nil); err != nil {
			errs = append(errs, err)
		}
	}
	tip := db.tipNode()
	res := AddResult{Adopted: tip != start, Tip: tip.tip()}
	if res.Adopted {
		res.RolledBack = int(start.number - db.intersectionNumber(start))
	}
	return res, errors.Join(errs...)
}

// intersectionNumber returns the number of the last block of the chain
// ending in a (the selection before a change) that is still on the selected
// chain, immutable part included. Callers hold addMu.
func (db *DB) intersectionNumber(a *node) uint64 {
	for ; a != nil && a.number > 0; a = a.parent {
		if h, err := db.selectedHash(a.number); err == nil && h == a.hash {
			return a.number
		}
	}
	return 0
}

// change is one AddBlock's (or Open's) effect, planned without touching the
// published state, written as one Pebble batch, then swapped in under mu.
type change struct {
	batch *pebble.Batch

	added   *node // a new block to attach under parent, or nil
	parent  *node
	invalid []*node // blocks found invalid; those in the tree leave it

	// A new selection: the old one up to intersect, then path. Nil
	// intersect: the selection stays.
	intersect   *node
	path        []*node
	pathDiffs   []*ledger.Diff
	pathCreated []map[string][]ledger.TxIn // each diff's outputs by address

	// An immutable-tip advance: the first cut blocks of the new selection
	// become immutable (their diffs are flushed, their txs counted into
	// rootTxs), pruned blocks are deleted.
	cut         int
	rootTxs     uint64
	rootCertRBs uint64
	pruned      []*node
}

func storeBlock(b *pebble.Batch, n *node, blk *block.Block) {
	b.Set(blockKey(n.hash), blk.Bytes(), nil)
	b.Set(volatileKey(n.number, n.hash), nil, nil)
}

// planAdvance adds to c the immutable-tip advance that the selection sel
// (after the current root, with its diffs) implies: the blocks more than K
// behind its tip become immutable, their diffs are flushed to the backing
// store with the new immutable marker and the count of txs through it, and
// the forks off them are deleted.
func (db *DB) planAdvance(c *change, sel []*node, diffs []*ledger.Diff) {
	c.cut = len(sel) - db.opts.K
	if c.cut <= 0 {
		c.cut = 0
		return
	}
	prev := db.root
	c.rootTxs, c.rootCertRBs = db.rootTxs, db.rootCertRBs
	for i, n := range sel[:c.cut] {
		flushDiff(c.batch, diffs[i])
		c.rootTxs += uint64(diffs[i].Txs)
		if n.header.LeiosCertified {
			c.rootCertRBs++
		}
		for _, sibling := range prev.children {
			if sibling == n {
				continue
			}
			for _, x := range sibling.subtree() {
				c.pruned = append(c.pruned, x)
				c.batch.Delete(blockKey(x.hash), nil)
				c.batch.Delete(volatileKey(x.number, x.hash), nil)
			}
		}
		c.batch.Delete(volatileKey(n.number, n.hash), nil)
		prev = n
	}
	c.batch.Set(keyImmutable, encodeTip(prev.tip()), nil)
	c.batch.Set(keyImmutableTxs, encodeCount(c.rootTxs), nil)
	c.batch.Set(keyImmutableCertRBs, encodeCount(c.rootCertRBs), nil)
}

// commit writes c's batch, applies c to the published state (publish) and,
// if the immutable tip advanced, moves its marker. Callers hold addMu.
func (db *DB) commit(c *change, wo *pebble.WriteOptions) error {
	if err := db.publish(c, wo); err != nil {
		return err
	}
	if c.cut > 0 {
		return db.markImmutable() // its fsyncs, off mu: readers need not wait
	}
	return nil
}

// publish writes c's batch and, only if that succeeded, applies c to the
// published state, all under mu so no reader sees one without the other.
func (db *DB) publish(c *change, wo *pebble.WriteOptions) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.store.Commit(c.batch, wo); err != nil {
		return fmt.Errorf("chaindb: write: %w", err)
	}
	oldTip := db.tipNode()
	for _, n := range c.invalid {
		db.invalid[n.hash] = n.number
		if db.nodes[n.hash] == n {
			delete(db.nodes, n.hash)
			n.detach()
		}
	}
	if c.added != nil {
		c.added.attach(c.parent)
		db.nodes[c.added.hash] = c.added
	}
	if c.intersect == nil {
		return nil
	}
	keep := c.intersect.number - db.root.number
	for _, n := range db.selected[keep:] {
		n.setDiff(nil, nil)
	}
	for i, n := range c.path {
		n.setDiff(c.pathDiffs[i], c.pathCreated[i])
	}
	db.selected = append(db.selected[:keep:keep], c.path...)
	if c.cut > 0 {
		newRoot := db.selected[c.cut-1]
		delete(db.nodes, db.root.hash)
		for _, n := range db.selected[:c.cut-1] {
			delete(db.nodes, n.hash)
			n.setDiff(nil, nil)
		}
		for _, n := range c.pruned {
			delete(db.nodes, n.hash)
		}
		newRoot.detach()
		newRoot.setDiff(nil, nil)
		db.root, db.rootTxs, db.rootCertRBs, db.selected = newRoot, c.rootTxs, c.rootCertRBs, db.selected[c.cut:]
		for h, number := range db.invalid {
			if number <= newRoot.number { // refused as too deep from now on anyway
				delete(db.invalid, h)
			}
		}
	}
	if c.intersect.number < oldTip.number {
		db.rollBackFollowers(c.intersect.tip())
	}
	close(db.tipChanged)
	db.tipChanged = make(chan struct{})
	return nil
}

// diffsThrough returns a fresh slice of the selected diffs up to and
// including n, which is on the selected chain.
func (db *DB) diffsThrough(n *node) []*ledger.Diff {
	out := make([]*ledger.Diff, 0, n.number-db.root.number)
	for _, s := range db.selected[:n.number-db.root.number] {
		out = append(out, s.diff)
	}
	return out
}

// createdThrough is diffsThrough for the diffs' outputs by address.
func (db *DB) createdThrough(n *node) []map[string][]ledger.TxIn {
	out := make([]map[string][]ledger.TxIn, 0, n.number-db.root.number)
	for _, s := range db.selected[:n.number-db.root.number] {
		out = append(out, s.created)
	}
	return out
}

// pointsThrough is diffsThrough for the points of the blocks whose diffs
// those are.
func (db *DB) pointsThrough(n *node) []block.Point {
	out := make([]block.Point, 0, n.number-db.root.number)
	for _, s := range db.selected[:n.number-db.root.number] {
		out = append(out, s.point())
	}
	return out
}
