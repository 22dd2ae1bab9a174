package fetch

import (
	"bytes"
	"cmp"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
)

// decisions is the fetch logic's state and its one decision function,
// plan. It knows every announced, unpruned point: whether its body is held
// (acquired) or wanted, which peers offered its body or its closure, which
// txs of held bodies are missing, and what is in flight to whom.
//
// It is a plain state machine: no goroutines, no I/O, no clock of its own
// (plan takes now). Not safe for concurrent use: the Fetcher guards it.
//
// Invariants (check verifies them):
//   - A point is acquired (body non-nil or rejected) for good until pruned:
//     plan never asks for an acquired point's body.
//   - Missing txs are kept per body (EB hash): every point of a hash with the
//     body's size shares one bodyState, as the LeiosDB shares one body.
//   - txs holds exactly the txs some held body misses; each txState lists
//     every (body, offset) that misses it, so one arrival discharges all.
//   - The budgets hold at every moment: in-flight bytes in total and per
//     peer, requests per peer, peers per item, bytes per txs request.
//   - Every txs request names a point whose body holds every tx it asks
//     for, at the offsets it gives, and goes to a peer that offered that
//     point's closure; every body request goes to a peer that offered it.
//     A certified point — its EB certified on a chain this node is taking
//     up — is the exception: every peer that has that chain holds its
//     closure, so any live peer may be asked, and it comes before every
//     other point. A certified point whose body is wanted goes first of
//     all to the peers that speak /leios/fetch/2, in multi-block requests
//     of up to MaxBlocksPerRequest EBs, MaxWholeInFlight per peer: the body
//     and every tx at once, as a syncing node needs them. While any live
//     peer speaks it, no certified body is asked for point by point.
//   - A late point (announced after its voting window, to a node catching
//     up) has its body asked for only once it is certified.
type decisions struct {
	budgets budgets
	syncing func() bool

	floor  uint64 // points below it are pruned; later announcements of them ignored
	points map[block.Point]*pointState
	byHash map[block.Hash][]*pointState
	bodies map[block.Hash]*bodyState // held bodies of known points
	txs    map[block.Hash]*txState   // txs some held body misses

	peers       map[peer.ID]*peerState
	requests    map[uint64]*Request // in flight
	bodyFetches map[block.Hash][]fetchRef
	// wholeFetches are the EBs a multi-block request in flight asks for,
	// by the request: neither their bodies nor their txs are asked of
	// anyone else meanwhile.
	wholeFetches map[block.Hash]uint64
	inFlight     uint64
	nextID       uint64
}

type budgets struct {
	total, perPeer, perRequest    uint64
	peersPerItem, requestsPerPeer int
	hedgeAfter                    time.Duration
}

// pointState is an announced point.
type pointState struct {
	point block.Point
	size  uint64     // announced EB size
	body  *bodyState // the held body; nil while wanted or rejected
	// rejected: its body can never be held (invalid, or the hash is held
	// with another size). Like a held body, it is never fetched again.
	rejected      bool
	bodyOffers    []peer.ID // peers that offered the body (or the closure)
	closureOffers []peer.ID // peers that offered the whole closure
	certified     bool      // certified on a candidate chain: fetched first, from any peer
	late          bool      // announced after its voting window: its body waits for certified
}

// offers are the peers that may be asked for ps's body (closure false) or
// txs (closure true): those that offered them, or every live peer for a
// certified point.
func (d *decisions) offers(ps *pointState, closure bool) []peer.ID {
	switch {
	case ps.certified:
		return d.livePeers()
	case closure:
		return ps.closureOffers
	}
	return ps.bodyOffers
}

// livePeers lists the peers with a live fetch client, in a fixed order.
func (d *decisions) livePeers() []peer.ID {
	live := make([]peer.ID, 0, len(d.peers))
	for id, p := range d.peers {
		if p.sessions > 0 {
			live = append(live, id)
		}
	}
	slices.Sort(live)
	return live
}

func (ps *pointState) wanted() bool { return ps.body == nil && !ps.rejected }

// bodyState is a held EB body and what its closure still misses.
type bodyState struct {
	hash    block.Hash
	size    uint64
	txs     []block.EBTx // nil once the closure is complete
	need    []*txState   // by offset: the missing tx there, or nil
	pending []int32      // offsets that were missing, ascending; compacted lazily
	missing int          // non-nil entries of need
	points  []*pointState
}

func (b *bodyState) complete() bool { return b.missing == 0 }

// txState is a tx some held body misses.
type txState struct {
	hash    block.Hash
	size    uint32
	needs   []txNeed   // every (body, offset) missing it
	fetches []fetchRef // requests in flight for it, oldest first
	// fetchBuf backs fetches up to the default MaxPeersPerItem, sparing an
	// allocation per tx on the planning path.
	fetchBuf [DefaultMaxPeersPerItem]fetchRef
}

type txNeed struct {
	body   *bodyState
	offset int32
}

// fetchRef is one outstanding request for an item.
type fetchRef struct {
	peer   peer.ID
	req    uint64
	issued int64 // Unix nanoseconds: a third of a time.Time, kept per tx
}

// peerState is a peer's budget use; sessions counts its live fetch
// clients, multiBlock says they speak /leios/fetch/2, wholeRequests counts
// its multi-block requests in flight.
type peerState struct {
	sessions      int
	inFlight      uint64
	requests      int
	multiBlock    bool
	wholeRequests int
}

func newDecisions(o Options) *decisions {
	o = o.withDefaults()
	return &decisions{
		budgets: budgets{
			total:           o.MaxInFlightBytes,
			perPeer:         o.MaxPeerInFlightBytes,
			perRequest:      o.MaxRequestBytes,
			peersPerItem:    o.MaxPeersPerItem,
			requestsPerPeer: o.MaxRequestsPerPeer,
			hedgeAfter:      o.HedgeAfter,
		},
		syncing: o.Syncing,
		points:  make(map[block.Point]*pointState),
		byHash:  make(map[block.Hash][]*pointState),
		bodies:  make(map[block.Hash]*bodyState),
		// Sized for a full EB, so that filing the first one does not rehash
		// on the way to its first requests.
		txs:          make(map[block.Hash]*txState, o.Limits.MaxTxs),
		peers:        make(map[peer.ID]*peerState),
		requests:     make(map[uint64]*Request),
		bodyFetches:  make(map[block.Hash][]fetchRef),
		wholeFetches: make(map[block.Hash]uint64),
	}
}

// announce learns an announced point of size bytes; its body is wanted
// unless the body of its hash is already held. It reports whether the
// point is known afterwards (false: below the prune floor).
func (d *decisions) announce(p block.Point, size uint64) bool {
	if p.Slot < d.floor {
		return false
	}
	if d.points[p] != nil {
		return true
	}
	ps := &pointState{point: p, size: size}
	d.points[p] = ps
	d.byHash[p.Hash] = append(d.byHash[p.Hash], ps)
	if b := d.bodies[p.Hash]; b != nil {
		d.attach(ps, b)
	}
	return true
}

// certify marks the known point p certified: it is fetched first, from any
// live peer. It reports whether p is known.
func (d *decisions) certify(p block.Point) bool {
	ps := d.points[p]
	if ps == nil {
		return false
	}
	ps.certified = true
	return true
}

// markLate marks the known point p late: its body waits for certify.
func (d *decisions) markLate(p block.Point) {
	if ps := d.points[p]; ps != nil {
		ps.late = true
	}
}

// knowsBody reports whether the body of p's hash is held here.
func (d *decisions) knowsBody(p block.Point) bool { return d.bodies[p.Hash] != nil }

// bodyHeld records that the body eb of point p is held, missing the txs
// at the given offsets (ascending). Every point of its hash with its size
// acquires it; points of its hash with another size are rejected. For a
// body already known, missing is ignored: the state here is kept current.
func (d *decisions) bodyHeld(p block.Point, eb *block.EBBody, missing []int) {
	if d.points[p] == nil {
		return // pruned meanwhile
	}
	b := d.bodies[p.Hash]
	if b == nil {
		b = d.newBody(eb, missing)
		d.bodies[p.Hash] = b
	}
	for _, q := range d.byHash[p.Hash] {
		d.attach(q, b)
	}
}

func (d *decisions) newBody(eb *block.EBBody, missing []int) *bodyState {
	b := &bodyState{
		hash:    eb.Hash(),
		size:    eb.Size(),
		txs:     eb.Txs,
		need:    make([]*txState, len(eb.Txs)),
		pending: make([]int32, len(missing)),
		missing: len(missing),
	}
	// One allocation each for the new txs and their first needs: a full EB
	// is 13,888 of them, and this runs on the path to its first request.
	slab := make([]txState, len(missing))
	firstNeeds := make([]txNeed, len(missing))
	for i, off := range missing {
		tx := eb.Txs[off]
		need := txNeed{body: b, offset: int32(off)}
		t := d.txs[tx.TxHash]
		if t == nil {
			t = &slab[i]
			t.hash, t.size = tx.TxHash, tx.Size
			t.fetches = t.fetchBuf[:0]
			firstNeeds[i] = need
			t.needs = firstNeeds[i : i+1 : i+1] // full: a second need copies
			d.txs[tx.TxHash] = t
		} else {
			t.needs = append(t.needs, need)
		}
		b.need[off] = t
		b.pending[i] = int32(off)
	}
	if b.complete() {
		b.settle()
	}
	return b
}

// attach gives q the body b if their sizes agree, and rejects q if not.
func (d *decisions) attach(q *pointState, b *bodyState) {
	if !q.wanted() {
		return
	}
	if q.size != b.size {
		q.rejected = true
		return
	}
	q.body = b
	b.points = append(b.points, q)
}

// settle drops what a complete closure no longer needs.
func (b *bodyState) settle() { b.txs, b.need, b.pending = nil, nil, nil }

// txsHeld discharges txs that are now held from every body missing them.
func (d *decisions) txsHeld(hashes []block.Hash) {
	for _, h := range hashes {
		t := d.txs[h]
		if t == nil {
			continue
		}
		for _, n := range t.needs {
			n.body.need[n.offset] = nil
			if n.body.missing--; n.body.complete() {
				n.body.settle()
			}
		}
		delete(d.txs, h)
	}
}

// bodyInvalid forgets the body of hash, which turned out invalid (a tx
// contradicts the size it declares): its points are rejected, never
// fetched again.
func (d *decisions) bodyInvalid(hash block.Hash) {
	if b := d.bodies[hash]; b != nil {
		d.release(b)
		delete(d.bodies, hash)
	}
	for _, q := range d.byHash[hash] {
		q.body, q.rejected = nil, true
	}
}

// release drops b's claims on the txs it misses.
func (d *decisions) release(b *bodyState) {
	for off, t := range b.need {
		if t == nil {
			continue
		}
		t.needs = slices.DeleteFunc(t.needs, func(n txNeed) bool { return n.body == b && n.offset == int32(off) })
		if len(t.needs) == 0 {
			delete(d.txs, t.hash)
		}
	}
	b.settle()
}

// offer records that peer holds p's body (closure false, with the offered
// size) or p's whole closure (closure true). It reports whether the offer
// was taken: an offer of an unknown point or of another size is not.
func (d *decisions) offer(id peer.ID, p block.Point, size uint64, closure bool) bool {
	ps := d.points[p]
	if ps == nil || (!closure && size != ps.size) {
		return false
	}
	if ps.rejected || (ps.body != nil && ps.body.complete()) {
		return true // nothing left to fetch
	}
	ps.bodyOffers = addPeer(ps.bodyOffers, id)
	if closure {
		ps.closureOffers = addPeer(ps.closureOffers, id)
	}
	return true
}

func addPeer(ids []peer.ID, id peer.ID) []peer.ID {
	if slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

func removePeer(ids []peer.ID, id peer.ID) []peer.ID {
	return slices.DeleteFunc(ids, func(x peer.ID) bool { return x == id })
}

// peerUp records a live fetch client to id: requests may go to it, and
// multi-block requests if multiBlock.
func (d *decisions) peerUp(id peer.ID, multiBlock bool) {
	p := d.peer(id)
	p.sessions++
	p.multiBlock = p.multiBlock || multiBlock
}

// peerDown records that a fetch client to id ended. With none left, its
// requests fail: their budget is released and their items re-planned.
func (d *decisions) peerDown(id peer.ID) {
	p := d.peers[id]
	if p == nil {
		return
	}
	if p.sessions--; p.sessions > 0 {
		return
	}
	for reqID, r := range d.requests {
		if r.Peer == id {
			d.complete(reqID, false)
		}
	}
	delete(d.peers, id)
}

func (d *decisions) peer(id peer.ID) *peerState {
	p := d.peers[id]
	if p == nil {
		p = &peerState{}
		d.peers[id] = p
	}
	return p
}

// complete ends request id: its budget is released. What its reply
// delivered was recorded before (bodyHeld, txsHeld). A failed request
// (ok false) also withdraws the peer's offer for its point: the peer may
// have dropped the EB, so the items go to other peers.
func (d *decisions) complete(id uint64, ok bool) {
	r := d.requests[id]
	if r == nil {
		return
	}
	delete(d.requests, id)
	d.inFlight -= r.Bytes
	if p := d.peers[r.Peer]; p != nil {
		p.inFlight -= r.Bytes
		p.requests--
		if r.Kind == RequestBlocks {
			p.wholeRequests--
		}
	}
	thisRequest := func(f fetchRef) bool { return f.req == id }
	endBody := func(h block.Hash) {
		if fs := slices.DeleteFunc(d.bodyFetches[h], thisRequest); len(fs) > 0 {
			d.bodyFetches[h] = fs
		} else {
			delete(d.bodyFetches, h)
		}
	}
	switch r.Kind {
	case RequestBody:
		endBody(r.Point.Hash)
	case RequestBlocks:
		for _, b := range r.Blocks {
			endBody(b.Point.Hash)
			delete(d.wholeFetches, b.Point.Hash)
		}
	case RequestTxs:
		for _, h := range r.TxHashes {
			if t := d.txs[h]; t != nil {
				t.fetches = slices.DeleteFunc(t.fetches, thisRequest)
			}
		}
	}
	if ps := d.points[r.Point]; ps != nil && !ok {
		ps.closureOffers = removePeer(ps.closureOffers, r.Peer)
		if r.Kind == RequestBody {
			ps.bodyOffers = removePeer(ps.bodyOffers, r.Peer)
		}
	}
}

// pointsBelow lists the known points with slot < slot.
func (d *decisions) pointsBelow(slot uint64) []block.Point {
	var out []block.Point
	for p := range d.points {
		if p.Slot < slot {
			out = append(out, p)
		}
	}
	return out
}

// prune forgets the points below slot, except those in keep (promoted
// EBs, which the LeiosDB keeps), with the bodies and txs only they
// needed, and ignores later announcements below slot. Requests in flight
// for them finish normally.
func (d *decisions) prune(slot uint64, keep map[block.Point]bool) {
	d.floor = max(d.floor, slot)
	for p, ps := range d.points {
		if p.Slot >= slot || keep[p] {
			continue
		}
		delete(d.points, p)
		if rest := slices.DeleteFunc(d.byHash[p.Hash], func(q *pointState) bool { return q == ps }); len(rest) > 0 {
			d.byHash[p.Hash] = rest
		} else {
			delete(d.byHash, p.Hash)
		}
		b := ps.body
		if b == nil {
			continue
		}
		if b.points = slices.DeleteFunc(b.points, func(q *pointState) bool { return q == ps }); len(b.points) == 0 {
			d.release(b)
			delete(d.bodies, b.hash)
		}
	}
}

// plan issues the requests the budgets allow now: bodies first (a body
// unlocks its closure), then txs, each in priority order — freshest slot
// first when caught up, oldest first while syncing. It returns them with
// the next time a hedge may become due (zero if none), so the caller can
// wake then.
func (d *decisions) plan(now time.Time) ([]*Request, time.Time) {
	order := d.workOrder()
	out := d.planBlocks(order, now, nil)
	// While a peer speaks /leios/fetch/2, certified bodies wait for its
	// next multi-block request rather than go point by point.
	batched := slices.ContainsFunc(d.livePeers(), func(id peer.ID) bool { return d.peers[id].multiBlock })
	for _, ps := range order {
		if ps.wanted() && !(ps.late && !ps.certified) && len(d.offers(ps, false)) > 0 && !d.wholeInFlight(ps) && !(ps.certified && batched) {
			out = d.planBody(ps, now, out)
		}
	}
	for _, ps := range order {
		if ps.body != nil && !ps.body.complete() && len(d.offers(ps, true)) > 0 && !d.wholeInFlight(ps) {
			out = d.planTxs(ps, now, out)
		}
	}
	return out, d.nextHedge(now)
}

// workOrder lists the points with something to fetch, by priority:
// certified points first, then by slot.
func (d *decisions) workOrder() []*pointState {
	var order []*pointState
	for _, ps := range d.points {
		if ps.wanted() || (ps.body != nil && !ps.body.complete()) {
			order = append(order, ps)
		}
	}
	oldestFirst := d.syncing()
	slices.SortFunc(order, func(a, b *pointState) int {
		if a.certified != b.certified {
			if a.certified {
				return -1
			}
			return 1
		}
		c := cmp.Compare(a.point.Slot, b.point.Slot)
		if !oldestFirst {
			c = -c
		}
		if c != 0 {
			return c
		}
		return bytes.Compare(a.point.Hash[:], b.point.Hash[:])
	})
	return order
}

// wholeInFlight reports whether a multi-block request in flight asks for
// ps's EB.
func (d *decisions) wholeInFlight(ps *pointState) bool {
	_, ok := d.wholeFetches[ps.point.Hash]
	return ok
}

// planBlocks packs the certified points whose bodies are wanted (order
// lists them first) into multi-block requests of up to
// MaxBlocksPerRequest EBs, each to a live peer that speaks
// /leios/fetch/2 and has fewer than MaxWholeInFlight in flight, least loaded first, within
// the byte and request budgets (a request counts its bodies' announced
// sizes).
func (d *decisions) planBlocks(order []*pointState, now time.Time, out []*Request) []*Request {
	var peers []peer.ID
	for _, id := range d.byLoad(d.livePeers()) {
		if p := d.peers[id]; p.multiBlock && p.wholeRequests < MaxWholeInFlight {
			peers = append(peers, id)
		}
	}
	var r *Request
	for _, ps := range order {
		if !ps.certified || len(peers) == 0 && r == nil {
			break
		}
		if !ps.wanted() || len(d.bodyFetches[ps.point.Hash]) > 0 {
			continue
		}
		if r != nil && !d.room(d.peers[r.Peer], r.Bytes+ps.size) {
			out, r = append(out, d.issue(r, now)), nil
		}
		for r == nil && len(peers) > 0 {
			if id := peers[0]; d.room(d.peers[id], ps.size) {
				r = &Request{ID: d.newID(), Peer: id, Kind: RequestBlocks, Point: ps.point}
			}
			peers = peers[1:]
		}
		if r == nil {
			break
		}
		r.Blocks = append(r.Blocks, BlockRef{Point: ps.point, EbSize: ps.size})
		r.Bytes += ps.size
		d.bodyFetches[ps.point.Hash] = append(d.bodyFetches[ps.point.Hash], fetchRef{peer: r.Peer, req: r.ID, issued: now.UnixNano()})
		d.wholeFetches[ps.point.Hash] = r.ID
		if len(r.Blocks) == MaxBlocksPerRequest {
			out, r = append(out, d.issue(r, now)), nil
		}
	}
	if r != nil {
		out = append(out, d.issue(r, now))
	}
	return out
}

func (d *decisions) planBody(ps *pointState, now time.Time, out []*Request) []*Request {
	fetches := d.bodyFetches[ps.point.Hash]
	if !d.mayFetch(fetches, now) {
		return out
	}
	id, ok := d.pickPeer(d.offers(ps, false), ps.size, fetches)
	if !ok {
		return out
	}
	r := &Request{ID: d.newID(), Peer: id, Kind: RequestBody, Point: ps.point, EbSize: ps.size, Bytes: ps.size}
	d.bodyFetches[ps.point.Hash] = append(fetches, fetchRef{peer: id, req: r.ID, issued: now.UnixNano()})
	return append(out, d.issue(r, now))
}

// planTxs packs requests for the missing txs of ps's body, in one pass
// over them, to the peers that offered ps's closure: each tx goes to the
// least loaded such peer that has room and is not already fetching it.
func (d *decisions) planTxs(ps *pointState, now time.Time, out []*Request) []*Request {
	b := ps.body
	b.pending = slices.DeleteFunc(b.pending, func(off int32) bool { return b.need[off] == nil })
	live := d.byLoad(d.offers(ps, true))
	states := make([]*peerState, len(live))
	for i, id := range live {
		states[i] = d.peers[id]
	}
	packing := make([]*Request, len(live)) // per live peer, the request being packed
	var packed uint64                      // bytes in packing, not yet issued
	issue := func(i int) {
		if r := packing[i]; r != nil {
			packed -= r.Bytes
			out = append(out, d.issue(r, now))
			packing[i] = nil
		}
	}
	for _, off := range b.pending {
		t := b.need[off]
		if !d.mayFetch(t.fetches, now) {
			continue
		}
		size, placed, blocked := uint64(t.size), false, 0
		for i, id := range live {
			if fetchedBy(t.fetches, id) {
				continue
			}
			if r := packing[i]; r != nil && r.Bytes+size > d.budgets.perRequest {
				issue(i)
			}
			p, r := states[i], packing[i]
			var inRequest uint64
			if r != nil {
				inRequest = r.Bytes
			}
			if (r == nil && p.requests >= d.budgets.requestsPerPeer) ||
				p.inFlight+inRequest+size > d.budgets.perPeer ||
				d.inFlight+packed+size > d.budgets.total {
				blocked++
				continue
			}
			if r == nil {
				r = &Request{ID: d.newID(), Peer: id, Kind: RequestTxs, Point: ps.point}
				packing[i] = r
			}
			r.Offsets = append(r.Offsets, int(off))
			r.TxHashes = append(r.TxHashes, t.hash)
			r.Bytes += size
			packed += size
			t.fetches = append(t.fetches, fetchRef{peer: id, req: r.ID, issued: now.UnixNano()})
			placed = true
			break
		}
		if !placed && blocked == len(live) {
			break // every peer is out of budget
		}
	}
	for i := range packing {
		issue(i)
	}
	return out
}

// mayFetch reports whether an item with these outstanding fetches may be
// requested once more: below MaxPeersPerItem, and either not requested at
// all or its latest request older than HedgeAfter.
func (d *decisions) mayFetch(fetches []fetchRef, now time.Time) bool {
	n := len(fetches)
	return n == 0 || (n < d.budgets.peersPerItem && now.UnixNano()-fetches[n-1].issued >= int64(d.budgets.hedgeAfter))
}

func fetchedBy(fetches []fetchRef, id peer.ID) bool {
	for _, f := range fetches {
		if f.peer == id {
			return true
		}
	}
	return false
}

// pickPeer chooses, among the offering peers not already fetching the item,
// the least loaded one with room for size bytes.
func (d *decisions) pickPeer(offers []peer.ID, size uint64, fetches []fetchRef) (peer.ID, bool) {
	for _, id := range d.byLoad(offers) {
		if !fetchedBy(fetches, id) && d.room(d.peers[id], size) {
			return id, true
		}
	}
	return "", false
}

// byLoad lists the live peers among ids, least in-flight bytes first.
func (d *decisions) byLoad(ids []peer.ID) []peer.ID {
	live := make([]peer.ID, 0, len(ids))
	for _, id := range ids {
		if p := d.peers[id]; p != nil && p.sessions > 0 {
			live = append(live, id)
		}
	}
	slices.SortFunc(live, func(a, b peer.ID) int {
		return cmp.Or(cmp.Compare(d.peers[a].inFlight, d.peers[b].inFlight), cmp.Compare(a, b))
	})
	return live
}

// room reports whether one more request of size bytes fits p's budgets and
// the total.
func (d *decisions) room(p *peerState, size uint64) bool {
	return p.requests < d.budgets.requestsPerPeer &&
		p.inFlight+size <= d.budgets.perPeer &&
		d.inFlight+size <= d.budgets.total
}

func (d *decisions) newID() uint64 {
	d.nextID++
	return d.nextID
}

// issue records r as in flight.
func (d *decisions) issue(r *Request, now time.Time) *Request {
	r.Issued = now
	d.requests[r.ID] = r
	d.inFlight += r.Bytes
	p := d.peers[r.Peer]
	p.inFlight += r.Bytes
	p.requests++
	if r.Kind == RequestBlocks {
		p.wholeRequests++
	}
	return r
}

// nextHedge is the earliest time after now at which an outstanding request
// becomes old enough for its items to be hedged.
func (d *decisions) nextHedge(now time.Time) time.Time {
	var next time.Time
	for _, r := range d.requests {
		due := r.Issued.Add(d.budgets.hedgeAfter)
		if due.After(now) && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	return next
}

// Stats is a snapshot of the fetch logic, for status lines and metrics.
type Stats struct {
	Points        int    // announced, unpruned
	BodiesWanted  int    // points whose body is not held
	Incomplete    int    // points with a held body and an incomplete closure
	MissingTxs    int    // distinct txs missing from held bodies
	Requests      int    // in flight
	InFlightBytes uint64 // in flight
	FetchedBytes  uint64 // received and ingested since start
	// BodiesByPoint counts the bodies fetched one by one (a body request);
	// BlocksWhole the EBs fetched whole, body and closure, by multi-block
	// requests (/leios/fetch/2): which path a syncing node took.
	BodiesByPoint uint64
	BlocksWhole   uint64
}

func (d *decisions) stats() Stats {
	s := Stats{Points: len(d.points), MissingTxs: len(d.txs), Requests: len(d.requests), InFlightBytes: d.inFlight}
	for _, ps := range d.points {
		switch {
		case ps.wanted():
			s.BodiesWanted++
		case ps.body != nil && !ps.body.complete():
			s.Incomplete++
		}
	}
	return s
}
