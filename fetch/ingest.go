package fetch

import (
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// The ingest handlers: the one path by which EB data enters the node,
// whether from peers (notify's announcements and offers, fetch's replies)
// or from the local forge. Each writes the LeiosDB first, then the tx
// cache, then tells the decision logic, under ingestMu (the ordering
// contract of DESIGN §4: a cache hit must always be backed by the LeiosDB).

// Announcement handles an RB's announcement of an EB: the point (slot,
// ann.EbHash) goes into the LeiosDB, then the announcement into the cache,
// then the decision logic wants the body — unless the body of that hash is
// already held (announced at another slot), in which case the point
// acquires it at once. Announcements below the last Prune are ignored.
func (f *Fetcher) Announcement(slot uint64, rbHash block.Hash, ann block.Announcement) error {
	p := block.Point{Slot: slot, Hash: ann.EbHash}
	f.ingestMu.Lock()
	defer f.ingestMu.Unlock()
	f.mu.Lock()
	stale := slot < f.dec.floor
	f.mu.Unlock()
	if stale {
		return nil
	}
	if err := f.db.InsertPoint(p, ann.EbSize); err != nil {
		return fmt.Errorf("fetch: announcement of %s: %w", p, err)
	}
	f.cache.InsertAnnouncement(slot, rbHash, ann.EbHash)
	info, _, err := f.db.PointInfo(p)
	if err != nil {
		return fmt.Errorf("fetch: announcement of %s: %w", p, err)
	}
	f.mu.Lock()
	f.dec.announce(p, ann.EbSize)
	load := info.HasBody && !f.dec.knowsBody(p)
	f.mu.Unlock()
	if load {
		if err := f.loadBody(p); err != nil {
			return fmt.Errorf("fetch: announcement of %s: %w", p, err)
		}
	}
	f.poke()
	return nil
}

// loadBody tells the decision logic of a body the LeiosDB already holds
// but the logic does not know (after a restart), with what it misses.
// ingestMu is held (or the Fetcher is not running yet).
func (f *Fetcher) loadBody(p block.Point) error {
	raw, ok, err := f.db.Body(p.Hash)
	if err != nil || !ok {
		return fmt.Errorf("body of %s: held %v: %w", p, ok, err)
	}
	eb, err := block.DecodeEBBody(raw, f.opts.Limits)
	if err != nil {
		return fmt.Errorf("body of %s: %w", p, err)
	}
	// Index it in the cache too (the LeiosDB holds it: the order holds);
	// the LeiosDB's own answer is what the logic takes.
	_, _ = f.cache.InsertBody(p.Hash, eb.Txs)
	missing, err := f.db.Missing(p)
	if err != nil {
		return fmt.Errorf("missing txs of %s: %w", p, err)
	}
	f.mu.Lock()
	f.dec.bodyHeld(p, eb, missing)
	f.mu.Unlock()
	return nil
}

// Body handles an EB body for the announced point p, from a peer or from
// the forge: it must be valid (block.DecodeEBBody under the limits), hash
// to p.Hash and have the announced size. It goes into the LeiosDB (whose
// BodyStored event notify turns into an offer), then into the cache, whose
// answer — the txs not held — seeds the decision logic's missing set.
func (f *Fetcher) Body(p block.Point, body []byte) error {
	eb, err := block.DecodeEBBody(body, f.opts.Limits)
	if err != nil {
		return fmt.Errorf("fetch: body of %s: %w", p, err)
	}
	return f.insertBody(p, eb)
}

func (f *Fetcher) insertBody(p block.Point, eb *block.EBBody) error {
	f.ingestMu.Lock()
	defer f.ingestMu.Unlock()
	held, err := f.db.InsertBody(p, eb.Bytes())
	if err != nil {
		if errors.Is(err, leiosdb.ErrTxSizeMismatch) {
			f.mu.Lock()
			f.dec.bodyInvalid(p.Hash)
			f.mu.Unlock()
		}
		return fmt.Errorf("fetch: body of %s: %w", p, err)
	}
	missing, err := f.cache.InsertBody(p.Hash, eb.Txs)
	if err != nil || len(missing) != held.Missing {
		// The cache cannot vouch for this body: its announcement was evicted,
		// or it has false misses (a full table, or txs it forgot with older
		// EBs that the LeiosDB still holds). It never has false hits, so
		// equal counts mean equal sets; otherwise ask the LeiosDB.
		if missing, err = f.db.Missing(p); err != nil {
			return fmt.Errorf("fetch: body of %s: %w", p, err)
		}
	}
	f.mu.Lock()
	f.dec.bodyHeld(p, eb, missing)
	f.mu.Unlock()
	f.poke()
	return nil
}

// Txs handles txs of the closure of the EB at p (each identified by its
// hash), from a peer (validated false) or the forge's own, validated txs
// (validated true). They go into the LeiosDB (stored once, discharged from
// every body that misses them, ClosureComplete events for closures that
// became complete), then are marked in the cache, then discharged from
// every EB of the decision logic that needs them.
func (f *Fetcher) Txs(p block.Point, txs [][]byte, validated bool) error {
	hashes := make([]block.Hash, len(txs))
	for i, tx := range txs {
		hashes[i] = block.HashBytes(tx)
	}
	f.ingestMu.Lock()
	defer f.ingestMu.Unlock()
	res, err := f.db.InsertTxs(txs)
	if err != nil {
		return fmt.Errorf("fetch: txs of %s: %w", p, err)
	}
	held := hashes
	if len(res.Dropped) > 0 {
		// A tx that only a dropped (invalid) body wanted went with it: mark
		// only what the LeiosDB holds, never a false hit.
		in := make([]bool, len(hashes))
		if _, err := f.db.HasTxs(hashes, in); err != nil {
			return fmt.Errorf("fetch: txs of %s: %w", p, err)
		}
		held = nil
		for i, h := range hashes {
			if in[i] {
				held = append(held, h)
			}
		}
	}
	if validated {
		f.cache.MarkValidated(held)
	} else {
		f.cache.MarkInserted(held)
	}
	f.mu.Lock()
	f.dec.txsHeld(held)
	for _, eb := range res.Dropped {
		f.dec.bodyInvalid(eb)
	}
	f.mu.Unlock()
	f.poke()
	return nil
}

// Prune handles the immutable tip passing slot: the cache is evicted
// first, then the LeiosDB collects its garbage (the hit-prune order: a
// cache hit must never outlive the LeiosDB data it vouches for), then the
// decision logic forgets the points below slot — except EBs promoted in
// the LeiosDB, whose closures a syncing node still needs.
func (f *Fetcher) Prune(immutableSlot uint64) error {
	f.ingestMu.Lock()
	defer f.ingestMu.Unlock()
	f.cache.EvictOlderThan(immutableSlot)
	if _, err := f.db.GC(immutableSlot); err != nil {
		return fmt.Errorf("fetch: prune below %d: %w", immutableSlot, err)
	}
	f.mu.Lock()
	below := f.dec.pointsBelow(immutableSlot)
	f.mu.Unlock()
	keep := make(map[block.Point]bool)
	for _, p := range below {
		info, ok, err := f.db.PointInfo(p)
		if err != nil {
			return fmt.Errorf("fetch: prune below %d: %w", immutableSlot, err)
		}
		if ok && info.Promoted {
			keep[p] = true
		}
	}
	f.mu.Lock()
	f.dec.prune(immutableSlot, keep)
	f.mu.Unlock()
	f.poke()
	return nil
}

// BlockOffer handles a peer's offer of the body of p (notify's block
// offer): the body may now be requested from it. An offer of an unknown
// point (not announced, or pruned) or of a size other than the announced
// one is ignored.
func (f *Fetcher) BlockOffer(id peer.ID, p block.Point, ebSize uint64) {
	f.offer(id, p, ebSize, false)
}

// BlockTxsOffer handles a peer's offer of the whole closure of p (notify's
// block-txs offer): its body and its txs may now be requested from it.
func (f *Fetcher) BlockTxsOffer(id peer.ID, p block.Point) {
	f.offer(id, p, 0, true)
}

func (f *Fetcher) offer(id peer.ID, p block.Point, ebSize uint64, closure bool) {
	f.mu.Lock()
	taken := f.dec.offer(id, p, ebSize, closure)
	f.mu.Unlock()
	if !taken {
		f.log.Debug("offer ignored: unknown point or wrong size", "peer", id, "point", p, "size", ebSize, "closure", closure)
		return
	}
	f.poke()
}
