package leios

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/notify"
	"github.com/leiosnode/leiosnode/txcache"
)

// Pipeline is one node's Leios pipeline. Build it with Open, serve
// Services on the host, Run it once, Close it after Run returned.
type Pipeline struct {
	opts     Options
	log      *slog.Logger
	db       *leiosdb.DB
	cache    *txcache.Cache
	fetcher  *fetch.Fetcher
	relay    *notify.Relay
	follower *leiosdb.Follower // subscribed at Open, so Run misses nothing
	clock    consensus.Clock
	// syncLagSlots is how far the tip may lag the clock before the node
	// counts as syncing (consensus.Timing.SyncLagSlots).
	syncLagSlots uint64
	chain        Chain   // set by Attach before Run; nil without a chain
	mempool      Mempool // set by Attach before Run; nil without a mempool

	// ingestMu serializes the handlers (handlers.go): each one's
	// LeiosDB-then-cache sequence runs whole, so the tx cache has one writer
	// and the ordering contract holds between handlers. It is held across
	// LeiosDB I/O. Lock order: ingestMu, then the fetch logic's own lock.
	ingestMu sync.Mutex

	announced     atomic.Uint64 // EB announcements ingested
	votesCast     atomic.Uint64 // this node's own votes relayed
	votesReceived atomic.Uint64 // votes new to the relay, from peers
	certsVerified atomic.Uint64 // certificates of new CertRBs that verified
	certsApplied  atomic.Uint64 // new CertRBs applied with their closures
	fromMempool   atomic.Uint64 // closure txs taken from the mempool, not fetched
	ebs           *ebLog

	parkedMu sync.Mutex               // guards parked
	parked   map[block.Point]struct{} // closures a parked CertRB waits for
	ahead    *fetchAhead              // certified closures ahead of the chain (FetchAhead)
	refill   *refill                  // certified closures the LeiosDB lost, fetched again
}

// Open opens the LeiosDB in opts.Dir, builds the tx cache, the fetch logic
// and the relay around it, and tells the fetch logic what the LeiosDB
// already holds, so a restarted node goes on fetching what it misses.
func Open(opts Options) (p *Pipeline, err error) {
	if opts, err = opts.withDefaults(); err != nil {
		return nil, err
	}
	p = &Pipeline{
		opts:         opts,
		log:          opts.Logger.With("component", "leios"),
		clock:        opts.Validator.Clock(),
		syncLagSlots: opts.Validator.Timing().SyncLagSlots(),
		parked:       make(map[block.Point]struct{}),
		ahead:        newFetchAhead(),
		refill:       newRefill(),
	}
	if p.ebs, err = newEBLog(opts.Validator.Timing(), p.clock, opts.Registerer); err != nil {
		return nil, err
	}
	if p.db, err = leiosdb.Open(opts.Dir, leiosdb.Options{
		Limits:        opts.Limits,
		Network:       opts.Network,
		CacheBytes:    opts.DBCacheBytes,
		MemTableBytes: opts.DBMemTableBytes,
		Logger:        p.log,
		Registerer:    opts.Registerer,
	}); err != nil {
		return nil, err
	}
	db := p.db // p is nil by the time a failed Open's deferred call runs
	defer func() {
		if err != nil {
			err = errors.Join(err, db.Close())
		}
	}()
	p.cache = txcache.New(opts.TxCache)
	fetchOpts := opts.Fetch
	fetchOpts.Store, fetchOpts.Ingest, fetchOpts.Limits = p.db, fetchIngest{p}, opts.Limits
	fetchOpts.Now, fetchOpts.Logger = opts.Now, p.log.With("part", "fetch")
	if fetchOpts.HedgeAfter == 0 {
		fetchOpts.HedgeAfter = opts.Validator.Timing().HedgeAfter()
	}
	if fetchOpts.Syncing == nil {
		fetchOpts.Syncing = p.syncing
	}
	if p.fetcher, err = fetch.New(fetchOpts); err != nil {
		return nil, err
	}
	leiosParams := opts.Validator.Leios()
	if p.relay, err = notify.NewRelay(notify.Options{
		ValidateHeader: opts.ValidateHeader,
		Clock:          p.clock,
		MaxClockSkew:   opts.Validator.MaxClockSkew(),
		Now:            opts.Now,
		ImmutableSlot:  p.immutableSlot,
		ValidateVotes:  p.validateVotes,
		// Votes are cast from LHdr to LHdr+LVote slots after their RB, and
		// diffuse for LDiff slots more.
		VoteWindow: notify.VoteWindow{
			From:    uint64(leiosParams.LHdr),
			Through: uint64(leiosParams.LHdr + leiosParams.LVote + leiosParams.LDiff),
		},
		OnAnnouncement:  func(_ peer.ID, h *block.Header) { p.ingestAnnouncement(h) },
		OnBlockOffer:    p.fetcher.BlockOffer,
		OnBlockTxsOffer: p.fetcher.BlockTxsOffer,
		OnVotes: func(_ peer.ID, votes []block.Vote) {
			p.votesReceived.Add(uint64(len(votes)))
			p.countVotes(votes)
		},
		Logger: p.log.With("part", "notify"),
	}); err != nil {
		return nil, err
	}
	if err = p.restore(); err != nil {
		return nil, err
	}
	if opts.Registerer != nil {
		if err = p.registerMetrics(opts.Registerer); err != nil {
			return nil, err
		}
	}
	p.follower = p.db.Follow(p.fetcher.Floor)
	return p, nil
}

// Attach gives the pipeline the node's selected chain and mempool, once
// they are open (the chain opens after the pipeline: replaying a CertRB
// reads its closure; the mempool after the chain). With a chain, the
// pipeline re-announces its volatile EBs when Run starts, fetches oldest
// first while the tip lags the clock by more than the sync lag, prunes as its
// immutable tip advances, promotes the EBs it certifies, and has it
// reselect when a parked CertRB's closure completes; the certified
// closures the chain applied that the LeiosDB lacks are found here, so
// Refill counts them from the start, and fetched again by Run. With a
// mempool, an EB's txs the mempool holds are taken from it instead of
// fetched, when the body arrives and as they are admitted later. Either may
// be nil. Call it before Run.
func (p *Pipeline) Attach(chain Chain, mempool Mempool) error {
	p.chain, p.mempool = chain, mempool
	if chain == nil {
		return nil
	}
	_, err := p.startRefill()
	return err
}

// immutableSlot is the relay's floor: the immutable tip's slot.
func (p *Pipeline) immutableSlot() uint64 {
	if p.chain == nil {
		return 0
	}
	return p.chain.ImmutableTip().Point.Slot
}

// Close closes the LeiosDB. Call it after Run returned.
func (p *Pipeline) Close() error { return p.db.Close() }

// Services are LeiosNotify and LeiosFetch, for the host to run with every
// peer, in the sets Options.Protocols chooses.
func (p *Pipeline) Services() ([]network.Service, error) {
	relay, err := notify.NewService(notify.ServiceOptions{Relay: p.relay, Protocols: p.opts.Protocols})
	if err != nil {
		return nil, err
	}
	fetcher, err := fetch.NewService(fetch.ServiceOptions{Fetcher: p.fetcher, Protocols: p.opts.Protocols})
	if err != nil {
		return nil, err
	}
	return []network.Service{relay, fetcher}, nil
}

// Run runs the pipeline until ctx ends: the fetch decision loop, the
// LeiosDB follower (offers, when bodies and closures were first held, the
// reselection of a parked CertRB), and with a chain (Attach) the
// re-announcement of its volatile EBs and pruning, with a mempool the
// follower of its admissions.
func (p *Pipeline) Run(ctx context.Context) error {
	if p.chain != nil {
		p.reannounceVolatile()
	}
	g, ctx := errgroup.WithContext(ctx)
	// Each loop labelled with its kind of work, for the CPU accounting.
	run := func(k cpuwork.Kind, loop func(context.Context) error) {
		g.Go(func() error {
			var err error
			cpuwork.Do(ctx, k, func(ctx context.Context) { err = loop(ctx) })
			return err
		})
	}
	run(cpuwork.Fetch, p.fetcher.Run)
	run(cpuwork.Notify, func(ctx context.Context) error { return p.follower.Run(ctx, p.followed) })
	if p.chain != nil {
		run(cpuwork.Store, p.pruneOnImmutableTip)
	}
	if p.Refill().Missing > 0 {
		run(cpuwork.Fetch, p.runRefill)
	}
	if p.mempool != nil {
		run(cpuwork.Fetch, p.followMempool)
	}
	return g.Wait()
}

// reannounceVolatile relays again, after a restart, the announcements of
// the volatile chain: the relay starts empty, and offers of points the
// LeiosDB already holds wait for their announcement.
func (p *Pipeline) reannounceVolatile() {
	chain := p.chain
	immutable, tip := chain.ImmutableTip(), chain.Tip()
	for number := immutable.BlockNumber + 1; number <= tip.BlockNumber; number++ {
		blk, err := chain.BlockByNumber(number)
		if err != nil {
			return // the selection moved; chain sync brings the rest
		}
		p.Announce(blk.Header)
	}
}

// followed handles one LeiosDB event: the relay offers the point, and the
// EB log notes when it was first held.
func (p *Pipeline) followed(ev leiosdb.Followed) error {
	p.relay.Offer(ev.Kind, ev.Point, ev.Info.EbSize)
	// What the LeiosDB held when Run started was received before: it is
	// not news of this run.
	if ev.Source != leiosdb.HeldAtStart {
		p.ebs.record(ev.Event, p.opts.Now())
	}
	if ev.Kind == leiosdb.ClosureComplete {
		p.closureCompleted(ev.Point)
	}
	return nil
}

// syncing reports whether the selected tip is far behind the clock: more
// than the genesis's sync lag (consensus.Timing.SyncLagSlots).
func (p *Pipeline) syncing() bool {
	if p.chain == nil {
		return false
	}
	return p.chain.Tip().Point.Slot+p.syncLagSlots < p.clock.SlotAt(p.opts.Now())
}

// Stats counts what the pipeline did since Open.
type Stats struct {
	EBsAnnounced     uint64 // distinct EB announcements ingested
	BodiesHeld       uint64 // EB bodies first held since Run started
	ClosuresComplete uint64 // closures first complete since Run started
	MissingTxs       int    // txs of held bodies still to fetch
	RequestsInFlight int
	FetchedBytes     uint64 // body and tx bytes fetched from peers
	// EBsFetchedWhole came by LeiosFetch v2's multi-block request, body
	// and closure at once; BodiesFetchedByPoint one body request each.
	EBsFetchedWhole      uint64
	BodiesFetchedByPoint uint64
	TxsFromMempool       uint64 // closure txs taken from the mempool instead

	VotesCast     uint64 // this node's own votes
	VotesReceived uint64 // valid votes new to this node, from peers
	VotesRelayed  uint64 // valid votes new to this node, from anyone: relayed to every peer
	VotesInvalid  uint64 // refused: unknown RB, seat or signature
	// VotesDelivered counts every vote handed to the relay, copies from
	// several peers included; VotesVerified those its signature check saw
	// (each distinct vote once: VotesVerified / VotesRelayed is the
	// verifications per vote); VotesRepeated those a peer sent twice on one
	// stream (its violation); VotesShed those past a peer's verification
	// budget, dropped unchecked.
	VotesDelivered uint64
	VotesVerified  uint64
	VotesRepeated  uint64
	VotesShed      uint64
	// Equivocations counts the (slot, issuer)s seen with two headers.
	Equivocations uint64
	CertsVerified uint64 // certificates of new CertRBs that verified
	CertsApplied  uint64 // new CertRBs applied with their certified closures
}

// Stats returns the pipeline's counts.
func (p *Pipeline) Stats() Stats {
	bodies, closures := p.ebs.counts()
	fs := p.fetcher.Stats()
	vs := p.relay.VoteStats()
	return Stats{
		EBsAnnounced:         p.announced.Load(),
		BodiesHeld:           bodies,
		ClosuresComplete:     closures,
		MissingTxs:           fs.MissingTxs,
		RequestsInFlight:     fs.Requests,
		FetchedBytes:         fs.FetchedBytes,
		EBsFetchedWhole:      fs.BlocksWhole,
		BodiesFetchedByPoint: fs.BodiesByPoint,
		TxsFromMempool:       p.fromMempool.Load(),
		VotesCast:            p.votesCast.Load(),
		VotesReceived:        p.votesReceived.Load(),
		VotesRelayed:         vs.Relayed,
		VotesInvalid:         vs.Invalid,
		VotesDelivered:       vs.Received,
		VotesVerified:        vs.Verified,
		VotesRepeated:        vs.Repeated,
		VotesShed:            vs.Shed,
		Equivocations:        vs.Equivocations,
		CertsVerified:        p.certsVerified.Load(),
		CertsApplied:         p.certsApplied.Load(),
	}
}

// EBTimes lists, for the most recent EBs, when this node first held each
// one's announcement, body and whole closure, its vote on it, the votes
// relayed for it, and what became of it on the selected chain (Fate): GET
// /api/ebs.
func (p *Pipeline) EBTimes() []apitypes.EBTimes {
	ebs := p.ebs.list()
	p.settleFates(ebs)
	out := make([]apitypes.EBTimes, len(ebs))
	for i, e := range ebs {
		out[i] = e.EBTimes
	}
	return out
}

// MissedWindows counts this node's latest EBs, newest first, whose voting
// window closed before it held and checked their closures: how far behind
// its Leios work is (admission.Figures.MissedInARow).
func (p *Pipeline) MissedWindows(now time.Time) int { return p.ebs.missedInARow(now) }

// LatestWindow is the newest EB whose voting window closed before now: the
// slot of its RB, and whether this node missed it (did not hold and check
// its closure in time). ok is false when there is none.
func (p *Pipeline) LatestWindow(now time.Time) (slot uint64, missed, ok bool) {
	latest := p.ebs.verdicts(now)
	if len(latest) == 0 {
		return 0, false, false
	}
	return latest[0].slot, latest[0].missed, true
}

// AwaitClosure waits until the whole closure of pt is held (as recorded
// from the LeiosDB's events) and returns when it first was.
func (p *Pipeline) AwaitClosure(ctx context.Context, pt block.Point) (time.Time, error) {
	return p.ebs.awaitClosure(ctx, pt)
}

// CheckConsistency checks, with no handler running, the fetch logic
// against itself and against the LeiosDB (fetch.Fetcher.CheckConsistency).
func (p *Pipeline) CheckConsistency() error {
	p.ingestMu.Lock()
	defer p.ingestMu.Unlock()
	return p.fetcher.CheckConsistency()
}

// StoreView is the pipeline's LeiosDB as others see it: its health and
// what it holds at a point. Only the handlers write the store, each write
// followed by the tx cache's and the fetch logic's, in that order; a
// writer outside them would break the order both rely on.
type StoreView interface {
	PointInfo(pt block.Point) (info leiosdb.PointInfo, ok bool, err error)
	WriteStalls() (count uint64, total time.Duration)
	Failed() <-chan struct{}
	Err() error
}

// DB is the pipeline's LeiosDB, for reading.
func (p *Pipeline) DB() StoreView { return p.db }

// FetchStats is a snapshot of the pipeline's fetch logic.
func (p *Pipeline) FetchStats() fetch.Stats { return p.fetcher.Stats() }
