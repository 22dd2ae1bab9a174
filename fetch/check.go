package fetch

import (
	"errors"
	"fmt"
	"slices"

	"github.com/libp2p/go-libp2p/core/peer"
)

// ErrInconsistent is wrapped by every failure of CheckConsistency.
var ErrInconsistent = errors.New("fetch: inconsistent state")

// CheckConsistency checks the decision logic against itself and against
// the Store, which no handler may write meanwhile (the caller holds the
// handlers' lock): every missing tx of a point is missing in the LeiosDB
// at the same point and offset (and no other is), no point whose body the
// LeiosDB holds is listed as wanted, every point the LeiosDB knows at or
// above the prune floor is known here, and the budgets hold. Tests call it
// after every handler call.
func (f *Fetcher) CheckConsistency() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.dec.check(); err != nil {
		return err
	}
	for p, ps := range f.dec.points {
		info, ok, err := f.opts.Store.PointInfo(p)
		if err != nil {
			return err
		}
		switch {
		case !ok:
			return fmt.Errorf("%w: %s known here, not in the LeiosDB", ErrInconsistent, p)
		case ps.wanted() && info.HasBody:
			return fmt.Errorf("%w: %s: held body listed as wanted", ErrInconsistent, p)
		case ps.body != nil && !info.HasBody:
			return fmt.Errorf("%w: %s: body acquired here, not held in the LeiosDB", ErrInconsistent, p)
		case ps.body != nil:
			want, err := f.opts.Store.Missing(p)
			if err != nil {
				return err
			}
			if got := ps.body.missingOffsets(); !slices.Equal(got, want) {
				return fmt.Errorf("%w: %s misses %v here, %v in the LeiosDB", ErrInconsistent, p, got, want)
			}
		}
	}
	infos, err := f.opts.Store.Points(f.dec.floor)
	if err != nil {
		return err
	}
	for _, info := range infos {
		if f.dec.points[info.Point] == nil {
			return fmt.Errorf("%w: %s in the LeiosDB, unknown here", ErrInconsistent, info.Point)
		}
	}
	return nil
}

// missingOffsets lists the offsets b misses, ascending.
func (b *bodyState) missingOffsets() []int {
	out := []int{}
	for off, t := range b.need {
		if t != nil {
			out = append(out, off)
		}
	}
	return out
}

// check verifies the invariants of decisions from scratch.
func (d *decisions) check() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
	}
	for p, ps := range d.points {
		if ps.point != p {
			return fail("point %s filed under %s", ps.point, p)
		}
		if !slices.Contains(d.byHash[p.Hash], ps) {
			return fail("%s missing from the by-hash index", p)
		}
		if b := ps.body; b != nil && (d.bodies[p.Hash] != b || !slices.Contains(b.points, ps) || b.size != ps.size) {
			return fail("%s: body not filed, or of another size", p)
		}
	}
	for h, b := range d.bodies {
		n := 0
		for off, t := range b.need {
			if t == nil {
				continue
			}
			n++
			if d.txs[t.hash] != t || b.txs[off].TxHash != t.hash ||
				!slices.Contains(t.needs, txNeed{body: b, offset: int32(off)}) {
				return fail("body %s offset %d: tx entry not filed", h.Short(), off)
			}
		}
		if n != b.missing {
			return fail("body %s counts %d missing, lists %d", h.Short(), b.missing, n)
		}
		if b.complete() != (b.need == nil) {
			return fail("body %s: complete %v but need %v", h.Short(), b.complete(), b.need != nil)
		}
	}
	for h, t := range d.txs {
		if len(t.needs) == 0 {
			return fail("tx %s needed by no body", h.Short())
		}
		for _, n := range t.needs {
			if d.bodies[n.body.hash] != n.body || n.body.need[n.offset] != t {
				return fail("tx %s: need of a body that does not list it", h.Short())
			}
		}
		if len(t.fetches) > d.budgets.peersPerItem {
			return fail("tx %s in flight to %d peers", h.Short(), len(t.fetches))
		}
	}
	for h, fs := range d.bodyFetches {
		if len(fs) > d.budgets.peersPerItem {
			return fail("body %s in flight to %d peers", h.Short(), len(fs))
		}
	}
	return d.checkBudgets()
}

// checkBudgets verifies the in-flight accounting and every budget.
func (d *decisions) checkBudgets() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
	}
	var total uint64
	perPeer := make(map[peer.ID]uint64)
	count := make(map[peer.ID]int)
	for _, r := range d.requests {
		total += r.Bytes
		perPeer[r.Peer] += r.Bytes
		count[r.Peer]++
		if r.Kind == RequestTxs && r.Bytes > d.budgets.perRequest {
			return fail("request %s exceeds %d bytes", r, d.budgets.perRequest)
		}
		if err := d.checkRequestPoint(r); err != nil {
			return err
		}
	}
	if total != d.inFlight || total > d.budgets.total {
		return fail("in flight %d, counted %d, budget %d", total, d.inFlight, d.budgets.total)
	}
	for id, p := range d.peers {
		if p.inFlight != perPeer[id] || p.requests != count[id] {
			return fail("peer %s: %d bytes / %d requests, counted %d / %d", id.ShortString(), perPeer[id], count[id], p.inFlight, p.requests)
		}
		if p.inFlight > d.budgets.perPeer || p.requests > d.budgets.requestsPerPeer {
			return fail("peer %s over budget: %d bytes, %d requests", id.ShortString(), p.inFlight, p.requests)
		}
	}
	for id := range perPeer {
		if d.peers[id] == nil {
			return fail("requests in flight to %s, which has no state", id.ShortString())
		}
	}
	return nil
}

// checkRequestPoint verifies that a txs request still in flight for a
// known body names a point of that body holding every tx at its offset.
func (d *decisions) checkRequestPoint(r *Request) error {
	if r.Kind != RequestTxs {
		return nil
	}
	ps := d.points[r.Point]
	if ps == nil || ps.body == nil || ps.body.complete() {
		return nil // pruned or done since; the reply will be ignored or harmless
	}
	for i, off := range r.Offsets {
		if off >= len(ps.body.txs) || ps.body.txs[off].TxHash != r.TxHashes[i] {
			return fmt.Errorf("%w: request %s: offset %d does not hold the tx asked for", ErrInconsistent, r, off)
		}
	}
	return nil
}
