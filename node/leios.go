package node

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/notify"
	"github.com/leiosnode/leiosnode/txcache"
)

// leios holds the node's Leios diffusion: the EB store, the tx cache, the
// fetch logic and the notify relay. Every EB — forged here or learned from
// a peer — goes through the same handlers in the same order (DESIGN §4):
// announcement (relayed by notify, then into the LeiosDB and the cache),
// body, closure txs; the LeiosDB's commits trigger notify's offers.
type leios struct {
	db      *leiosdb.DB
	cache   *txcache.Cache
	fetcher *fetch.Fetcher
	relay   *notify.Relay

	announced atomic.Uint64 // EB announcements accepted
	times     *ebLog
	diffusion prometheus.Histogram // slot start to complete closure
}

func (n *Node) buildLeios() error {
	var err error
	l := &leios{times: newEBLog(), diffusion: prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "leiosnode", Name: "eb_diffusion_seconds",
		Help:    "Time from an EB's slot start (when it was forged) to its complete closure here.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
	})}
	n.leios = l
	limits := n.genesis.Leios.EBLimits()
	log := n.log.With("component", "leios")
	if l.db, err = leiosdb.Open(filepath.Join(n.cfg.DatabasePath, "leios"), leiosdb.Options{
		Limits: limits,
		Logger: log,
	}); err != nil {
		return err
	}
	l.cache = txcache.New(txcache.Options{TxCapacity: n.cfg.TxCacheCapacity})
	clock := n.validator.Clock()
	if l.fetcher, err = fetch.New(fetch.Options{
		DB:     l.db,
		Cache:  l.cache,
		Limits: limits,
		// Oldest first while the chain is far behind the wall clock.
		Syncing: func() bool { return n.chain.Tip().Point.Slot+syncingSlots < clock.SlotAt(time.Now()) },
		Logger:  log.With("part", "fetch"),
	}); err != nil {
		return err
	}
	l.relay, err = notify.NewRelay(notify.Options{
		ValidateHeader:  n.validator.ValidateHeader,
		Clock:           clock,
		MaxClockSkew:    time.Duration(n.genesis.MaxClockSkewMs) * time.Millisecond,
		ImmutableSlot:   func() uint64 { return n.chain.ImmutableTip().Point.Slot },
		Store:           l.db,
		OnAnnouncement:  func(_ peer.ID, h *block.Header) { n.ingestAnnouncement(h) },
		OnBlockOffer:    l.fetcher.BlockOffer,
		OnBlockTxsOffer: l.fetcher.BlockTxsOffer,
		// A third header for one (slot, issuer) proves nothing new: its
		// sender goes at once.
		Disconnect: func(id peer.ID) { n.host.Disconnect(id, "third header for one slot and issuer") },
		Logger:     log.With("part", "notify"),
	})
	return err
}

// reannounceVolatile relays again, after a restart, the announcements of
// the volatile chain: the relay starts empty, and offers of points the
// LeiosDB already holds wait for their announcement.
func (n *Node) reannounceVolatile() {
	immutable, tip := n.chain.ImmutableTip(), n.chain.Tip()
	for number := immutable.BlockNumber + 1; number <= tip.BlockNumber; number++ {
		blk, err := n.chain.BlockByNumber(number)
		if err != nil {
			return // the selection moved; chain sync brings the rest
		}
		if blk.Header.Announcement != nil {
			n.announce(blk.Header)
		}
	}
}

// syncingSlots is how far behind the wall clock the tip must be for the
// node to count as syncing (fetching oldest EBs first).
const syncingSlots = 100

// announce takes an RB header that passed validation — forged here or
// synced by chain sync — to notify (relayed to every peer) and, the first
// time, if it announces an EB, to the shared handlers.
func (n *Node) announce(h *block.Header) {
	fresh, err := n.leios.relay.AnnounceNew(h)
	if err != nil {
		n.log.Debug("announcement not relayed", "point", h.Point(), "err", err)
		return
	}
	if fresh { // chain sync brings each header once per peer
		n.ingestAnnouncement(h)
	}
}

// ingestAnnouncement records an EB announcement in the LeiosDB and the tx
// cache, so the fetch logic acts on the offers that follow it.
func (n *Node) ingestAnnouncement(h *block.Header) {
	if h.Announcement == nil {
		return
	}
	if err := n.leios.fetcher.Announcement(h.Slot, h.Hash(), *h.Announcement); err != nil {
		n.log.Warn("EB announcement", "point", h.Point(), "err", err)
		return
	}
	if n.leios.times.recordAnnounced(block.Point{Slot: h.Slot, Hash: h.Announcement.EbHash}) {
		n.leios.announced.Add(1)
	}
}

// publishEB is the forge's path into the shared handlers, in DESIGN §4's
// order: announcement, body (its commit triggers the block offer), closure
// txs (already validated by the forge; their commit triggers the block-txs
// offer).
func (n *Node) publishEB(rb *block.Header, eb *block.EBBody, closure [][]byte) {
	n.announce(rb)
	p := block.Point{Slot: rb.Slot, Hash: eb.Hash()}
	if err := n.leios.fetcher.Body(p, eb.Bytes()); err != nil {
		n.log.Error("storing a forged EB body", "point", p, "err", err)
		return
	}
	if err := n.leios.fetcher.Txs(p, closure, true); err != nil {
		n.log.Error("storing a forged EB closure", "point", p, "err", err)
	}
}

// announceSyncedHeader is chain sync's hook for a header it validated: one
// that announces an EB counts as an announcement.
func (n *Node) announceSyncedHeader(h *block.Header) {
	if h.Announcement != nil {
		n.announce(h)
	}
}

// pruneLeios prunes the Leios state as the immutable tip passes it: the
// fetch logic evicts the tx cache before the LeiosDB GC runs (the
// hit-prune hazard), and notify forgets the equivocation state.
func (n *Node) pruneLeios(ctx context.Context) error {
	var pruned uint64
	for {
		changed := n.chain.TipChanged()
		if slot := n.chain.ImmutableTip().Point.Slot; slot > pruned {
			if err := n.leios.fetcher.Prune(slot); err != nil {
				n.log.Warn("pruning Leios state", "slot", slot, "err", err)
			} else {
				n.leios.relay.Prune(slot)
				pruned = slot
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}

// ebTimes is when this node first held an EB's announcement, body and
// whole closure, for GET /api/ebs and the devnet report's diffusion times.
type ebTimes struct {
	Slot      uint64     `json:"slot"`
	EbHash    string     `json:"ebHash"`
	Announced *time.Time `json:"announced,omitempty"`
	Body      *time.Time `json:"body,omitempty"`
	Closure   *time.Time `json:"closure,omitempty"`
}

// maxEBTimes bounds the EBs remembered in ebLog.
const maxEBTimes = 4096

// ebLog remembers ebTimes for the most recent EBs.
type ebLog struct {
	mu               sync.Mutex // guards the fields below
	byKey            map[block.Point]*ebTimes
	order            []block.Point // insertion order, for eviction
	bodies, closures uint64
}

func newEBLog() *ebLog { return &ebLog{byKey: map[block.Point]*ebTimes{}} }

func (l *ebLog) entry(p block.Point) *ebTimes {
	e, ok := l.byKey[p]
	if !ok {
		e = &ebTimes{Slot: p.Slot, EbHash: p.Hash.String()}
		l.byKey[p] = e
		l.order = append(l.order, p)
		if len(l.order) > maxEBTimes {
			delete(l.byKey, l.order[0])
			l.order = l.order[1:]
		}
	}
	return e
}

// recordAnnounced notes the first announcement of p and reports whether
// it was the first.
func (l *ebLog) recordAnnounced(p block.Point) bool {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(p)
	if e.Announced != nil {
		return false
	}
	e.Announced = &now
	return true
}

// recordEvent notes a LeiosDB commit event.
func (l *ebLog) recordEvent(ev leiosdb.Event) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(ev.Point)
	switch {
	case ev.Kind == leiosdb.BodyStored && e.Body == nil:
		e.Body = &now
		l.bodies++
	case ev.Kind == leiosdb.ClosureComplete && e.Closure == nil:
		e.Closure = &now
		l.closures++
	}
}

func (l *ebLog) list() []ebTimes {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ebTimes, 0, len(l.order))
	for _, p := range l.order {
		out = append(out, *l.byKey[p])
	}
	return out
}

func (l *ebLog) counts() (bodies, closures uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bodies, l.closures
}

// followLeiosDB records when bodies and closures become held, from the
// LeiosDB's commit events.
func (n *Node) followLeiosDB(ctx context.Context) error {
	for {
		events, cancel := n.leios.db.Subscribe()
		for open := true; open; {
			select {
			case <-ctx.Done():
				cancel()
				return nil
			case ev, ok := <-events:
				if !ok {
					open = false // cut off for lagging: subscribe again
					break
				}
				n.leios.times.recordEvent(ev)
				if ev.Kind == leiosdb.ClosureComplete {
					// The EB was forged at its RB's slot start.
					started := n.validator.Clock().SlotStart(ev.Point.Slot)
					n.leios.diffusion.Observe(time.Since(started).Seconds())
				}
			}
		}
		cancel()
	}
}
