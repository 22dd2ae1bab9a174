package fetch

import (
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
)

// What the decision logic is told. The pipeline's handlers call the
// first group after they stored the data (LeiosDB, then cache), under
// their own lock, so the logic learns each fact once and in order;
// notify's client calls the offers. Each wakes the decision loop.

// Announced learns the announced point p of an EB of ebSize bytes. It
// reports whether the point is known now (false: below the prune floor,
// ignored) and whether the decision logic already holds the body of p's
// hash — if the LeiosDB holds a body the logic does not, the handler
// loads it (BodyHeld), as after a restart.
func (f *Fetcher) Announced(p block.Point, ebSize uint64) (known, bodyKnown bool) {
	f.mu.Lock()
	known = f.dec.announce(p, ebSize)
	bodyKnown = f.dec.knowsBody(p)
	f.mu.Unlock()
	f.poke()
	return known, bodyKnown
}

// Floor is the slot below which points are pruned: announcements below it
// are ignored.
func (f *Fetcher) Floor() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dec.floor
}

// BodyHeld learns that the body eb of p is held, missing the txs at the
// given offsets (ascending): the LeiosDB's answer, or the tx cache's when
// it agrees. Every point of eb's hash with its size acquires it.
func (f *Fetcher) BodyHeld(p block.Point, eb *block.EBBody, missing []int) {
	f.mu.Lock()
	f.dec.bodyHeld(p, eb, missing)
	f.mu.Unlock()
	f.poke()
}

// BodyInvalid learns that the body of ebHash is invalid (a tx contradicts
// the size it declares): its points are never fetched again.
func (f *Fetcher) BodyInvalid(ebHash block.Hash) {
	f.mu.Lock()
	f.dec.bodyInvalid(ebHash)
	f.mu.Unlock()
	f.poke()
}

// TxsHeld discharges the txs now held from every EB that misses them.
func (f *Fetcher) TxsHeld(hashes []block.Hash) {
	f.mu.Lock()
	f.dec.txsHeld(hashes)
	f.mu.Unlock()
	f.poke()
}

// Misses reports whether some held body misses the tx with this hash: the
// decision logic would fetch it.
func (f *Fetcher) Misses(txHash block.Hash) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dec.txs[txHash] != nil
}

// PointsBelow lists the known points with a slot below slot: the
// candidates of the next Prune, for the caller to tell which to keep.
func (f *Fetcher) PointsBelow(slot uint64) []block.Point {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dec.pointsBelow(slot)
}

// Prune forgets the points below slot except those in keep (EBs the
// LeiosDB keeps for good, whose closures a syncing node still needs),
// with the bodies and txs only they needed, and ignores announcements
// below slot from then on. Requests in flight finish normally.
func (f *Fetcher) Prune(slot uint64, keep map[block.Point]bool) {
	f.mu.Lock()
	f.dec.prune(slot, keep)
	f.mu.Unlock()
	f.poke()
}

// Certified marks the known point p as certified on a chain this node is
// taking up (a CertRB waits for its closure): it is fetched before every
// other point, and from any live peer, since every peer that has that
// chain holds the closure. It reports whether p is known.
func (f *Fetcher) Certified(p block.Point) bool {
	f.mu.Lock()
	known := f.dec.certify(p)
	f.mu.Unlock()
	f.poke()
	return known
}

// Late marks the known point p as announced after its voting window had
// closed, to a node catching up: no vote can certify it any more but those
// already cast, so its body is wanted only once a chain certifies it
// (Certified) — and then, from a peer that speaks /leios/fetch/2, whole.
// A syncing node thus fetches the certified EBs alone.
func (f *Fetcher) Late(p block.Point) {
	f.mu.Lock()
	f.dec.markLate(p)
	f.mu.Unlock()
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
