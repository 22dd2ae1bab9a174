package leios

import (
	"context"
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// The handlers: the one path by which EB data enters the node, whether
// from peers (notify's announcements, fetch's replies) or from the local
// forge. Each writes the LeiosDB first, then the tx cache, then tells the
// fetch logic, under ingestMu.

// Announce takes an RB header that its source validated — forged here, or
// brought by chain sync — and that announces an EB to every peer through
// the relay and, the first time the relay sees it, into the pipeline. A
// header that announces no EB is not Leios news and is ignored; one the
// relay refuses (below the immutable tip, from the future, a third for its
// slot and issuer) goes no further.
func (p *Pipeline) Announce(h *block.Header) {
	if h.Announcement == nil {
		return
	}
	fresh, err := p.relay.AnnounceNew(h)
	if err != nil {
		p.log.Debug("announcement not relayed", "point", h.Point(), "err", err)
		return
	}
	if fresh {
		p.ingestAnnouncement(h)
	}
}

// Publish is the forge's path into the pipeline, in the order peers' EBs
// take: the announcement by rb, the body eb (its commit makes the relay
// offer it), the closure's txs, already validated by the forge (their
// commit makes the relay offer the closure).
func (p *Pipeline) Publish(rb *block.Header, eb *block.EBBody, closure []block.HashedTx) error {
	if len(closure) != len(eb.Txs) {
		return fmt.Errorf("leios: publishing the EB of %s: %d txs for a body of %d", rb.Point(), len(closure), len(eb.Txs))
	}
	p.Announce(rb)
	pt := block.Point{Slot: rb.Slot, Hash: eb.Hash()}
	if err := p.insertBody(pt, eb, closure); err != nil {
		return fmt.Errorf("leios: publishing the EB of %s: %w", rb.Point(), err)
	}
	return nil
}

// ingestAnnouncement records an EB announcement accepted by the relay —
// once per header, whichever path brought it — in the LeiosDB and the tx
// cache, and the fetch logic then wants the body, unless the body of that
// hash is already held (announced at another slot): then the point
// acquires it at once. Announcements below the last prune are ignored.
func (p *Pipeline) ingestAnnouncement(h *block.Header) {
	if h.Announcement == nil {
		return
	}
	if err := p.insertAnnouncement(h.Slot, h.Hash(), *h.Announcement); err != nil {
		p.log.Warn("EB announcement", "point", h.Point(), "err", err)
		return
	}
	if p.ebs.recordAnnounced(block.Point{Slot: h.Slot, Hash: h.Announcement.EbHash}, h.Hash(), p.opts.Now()) {
		p.announced.Add(1)
	}
}

func (p *Pipeline) insertAnnouncement(slot uint64, rbHash block.Hash, ann block.Announcement) error {
	pt := block.Point{Slot: slot, Hash: ann.EbHash}
	p.ingestMu.Lock()
	defer p.ingestMu.Unlock()
	if slot < p.fetcher.Floor() {
		return nil
	}
	if err := p.db.InsertPoint(pt, ann.EbSize); err != nil {
		return err
	}
	p.cache.InsertAnnouncement(slot, rbHash, ann.EbHash)
	info, _, err := p.db.PointInfo(pt)
	if err != nil {
		return err
	}
	known, bodyKnown := p.fetcher.Announced(pt, ann.EbSize)
	if known && p.late(slot) {
		p.fetcher.Late(pt)
	}
	if known && info.HasBody && !bodyKnown {
		return p.loadBody(pt)
	}
	return nil
}

// late reports whether an EB announced at slot reaches a node that is
// catching up after the EB's votes stopped diffusing: only a certificate
// can make it count now, so its body waits for one (fetch.Fetcher.Late).
func (p *Pipeline) late(slot uint64) bool {
	if !p.syncing() {
		return false
	}
	params := p.opts.Validator.Leios()
	windowEnd := slot + uint64(params.LHdr+params.LVote+params.LDiff)
	return windowEnd < p.clock.SlotAt(p.opts.Now())
}

// loadBody tells the fetch logic of a body the LeiosDB already holds but
// the logic does not know (after a restart), with what it misses.
// ingestMu is held (or the pipeline is not running yet).
func (p *Pipeline) loadBody(pt block.Point) error {
	raw, ok, err := p.db.Body(pt.Hash)
	if err != nil || !ok {
		return fmt.Errorf("body of %s: held %v: %w", pt, ok, err)
	}
	eb, err := block.DecodeEBBody(raw, p.opts.Limits)
	if err != nil {
		return fmt.Errorf("body of %s: %w", pt, err)
	}
	// Index it in the cache too (the LeiosDB holds it: the order holds);
	// the LeiosDB's own answer is what the logic takes.
	_, _ = p.cache.InsertBody(pt.Hash, eb.Txs)
	missing, err := p.db.Missing(pt)
	if err != nil {
		return fmt.Errorf("missing txs of %s: %w", pt, err)
	}
	p.fetcher.BodyHeld(pt, eb, missing)
	return nil
}

// restore tells the fetch logic the points the LeiosDB holds, and their
// bodies, so a restarted node goes on fetching what they miss.
func (p *Pipeline) restore() error {
	infos, err := p.db.Points(0)
	if err != nil {
		return fmt.Errorf("leios: restore: %w", err)
	}
	for _, info := range infos {
		known, bodyKnown := p.fetcher.Announced(info.Point, info.EbSize)
		if known && info.HasBody && !bodyKnown {
			if err := p.loadBody(info.Point); err != nil {
				return fmt.Errorf("leios: restore: %w", err)
			}
		}
	}
	return nil
}

// insertBody stores the body eb of the announced point pt. It goes into
// the LeiosDB, then into the cache, whose answer — the txs not held —
// seeds the fetch logic's missing set, less the txs at hand: the closure
// itself when the forge publishes it (closure, in EB order), else those
// the mempool holds. Those are stored at once, validated.
func (p *Pipeline) insertBody(pt block.Point, eb *block.EBBody, closure []block.HashedTx) error {
	p.ingestMu.Lock()
	defer p.ingestMu.Unlock()
	held, err := p.db.InsertBody(pt, eb.Bytes())
	if err != nil {
		if errors.Is(err, leiosdb.ErrTxSizeMismatch) {
			p.fetcher.BodyInvalid(pt.Hash)
		}
		return err
	}
	p.ebs.recordSize(pt, eb)
	missing, err := p.cache.InsertBody(pt.Hash, eb.Txs)
	if err != nil || len(missing) != held.Missing {
		// The cache cannot vouch for this body: its announcement was evicted,
		// or it has false misses (a full table, or txs it forgot with older
		// EBs that the LeiosDB still holds). It never has false hits, so
		// equal counts mean equal sets; otherwise ask the LeiosDB.
		if missing, err = p.db.Missing(pt); err != nil {
			return err
		}
	}
	if missing, err = p.takeAtHand(pt, eb, missing, closure); err != nil {
		return err
	}
	p.fetcher.BodyHeld(pt, eb, missing)
	return nil
}

// takeAtHand stores the txs at the missing offsets of eb that are at hand —
// in closure if given (the forge's own, which it validated), else held by
// the mempool (admitted, so validated) — and returns the offsets still
// missing. ingestMu is held.
func (p *Pipeline) takeAtHand(pt block.Point, eb *block.EBBody, missing []int, closure []block.HashedTx) ([]int, error) {
	if len(missing) == 0 || closure == nil && p.mempool == nil {
		return missing, nil
	}
	var found []block.HashedTx
	still := missing[:0:0]
	for _, off := range missing {
		want := eb.Txs[off]
		switch {
		case closure != nil:
			found = append(found, closure[off])
		case p.mempool != nil:
			if tx, ok := p.mempool.Tx(want.TxHash); ok && uint32(tx.Size()) == want.Size {
				found = append(found, block.HashedTx{Hash: tx.Hash(), Bytes: tx.Bytes()})
				continue
			}
			still = append(still, off)
		}
	}
	if len(found) == 0 {
		return missing, nil
	}
	if err := p.storeTxs(pt, found, true); err != nil {
		return nil, err
	}
	if closure == nil {
		p.fromMempool.Add(uint64(len(found)))
	}
	return still, nil
}

// insertTxs stores txs of the closure of the EB at pt, from a peer
// (validated false) or the forge (validated true). They go into the
// LeiosDB (stored once, discharged from every body that misses them), then
// are marked in the cache, then discharged from every EB the fetch logic
// has that needs them.
func (p *Pipeline) insertTxs(pt block.Point, txs []block.HashedTx, validated bool) error {
	p.ingestMu.Lock()
	defer p.ingestMu.Unlock()
	return p.storeTxs(pt, txs, validated)
}

// storeTxs is insertTxs with ingestMu held.
func (p *Pipeline) storeTxs(pt block.Point, txs []block.HashedTx, validated bool) error {
	hashes := make([]block.Hash, len(txs))
	for i, tx := range txs {
		hashes[i] = tx.Hash
	}
	res, err := p.db.InsertTxs(txs)
	if err != nil {
		return fmt.Errorf("%d txs (of %s): %w", len(txs), pt, err)
	}
	held := hashes
	if len(res.Dropped) > 0 {
		// A tx that only a dropped (invalid) body wanted went with it: mark
		// only what the LeiosDB holds, never a false hit.
		in := make([]bool, len(hashes))
		if _, err := p.db.HasTxs(hashes, in); err != nil {
			return fmt.Errorf("txs of %s: %w", pt, err)
		}
		held = nil
		for i, h := range hashes {
			if in[i] {
				held = append(held, h)
			}
		}
	}
	if validated {
		p.cache.MarkValidated(held)
	} else {
		p.cache.MarkInserted(held)
	}
	for _, eb := range res.Dropped {
		p.fetcher.BodyInvalid(eb)
	}
	p.fetcher.TxsHeld(held)
	return nil
}

// fetchIngest is the pipeline as the fetch logic hands it checked replies.
type fetchIngest struct{ p *Pipeline }

func (i fetchIngest) Body(pt block.Point, eb *block.EBBody) error {
	if err := i.p.insertBody(pt, eb, nil); err != nil {
		return fmt.Errorf("leios: body of %s: %w", pt, err)
	}
	return nil
}

func (i fetchIngest) Txs(pt block.Point, txs []block.HashedTx) error {
	if err := i.p.insertTxs(pt, txs, false); err != nil {
		return fmt.Errorf("leios: %w", err)
	}
	return nil
}

// followMempool stores, as the mempool admits them, the txs that a held
// EB body misses, until ctx ends: they are validated, and need not be
// fetched. At a high rate, txs reach a node by tx-submission about when
// the EBs naming them do, so this completes closures sooner than fetching
// alone.
func (p *Pipeline) followMempool(ctx context.Context) error {
	var ticket uint64
	for {
		changed := p.mempool.Changed() // before reading, so no admission is missed
		var found []block.HashedTx
		for e := range p.mempool.Since(ticket) {
			ticket = e.Ticket
			if p.fetcher.Misses(e.Tx.Hash()) {
				found = append(found, block.HashedTx{Hash: e.Tx.Hash(), Bytes: e.Tx.Bytes()})
			}
		}
		if len(found) > 0 {
			p.ingestMu.Lock()
			err := p.storeTxs(block.Point{}, found, true)
			p.ingestMu.Unlock()
			if err != nil {
				return fmt.Errorf("leios: storing admitted txs an EB misses: %w", err)
			}
			p.fromMempool.Add(uint64(len(found)))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}
