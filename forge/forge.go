package forge

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/internal/simtrace"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/vrf"
)

// Ledger is where the forge reads the tip it builds on; the chain database
// serves it.
type Ledger interface {
	// TipUTxO returns the selected tip and the UTxO after it, taken
	// together; the forge calls release once it no longer reads utxo.
	TipUTxO() (utxo ledger.UTxO, tip block.Tip, release func(), err error)
	// Block returns a stored block: the tip's, for the EB it announces.
	Block(hash block.Hash) (*block.Block, error)
	// TipChanged returns a channel closed at the next change of the
	// selected tip: a vote may be due.
	TipChanged() <-chan struct{}
}

// Leios is the Leios pipeline as the forge uses it; leios.Pipeline serves
// it.
type Leios interface {
	// Publish takes a forged, adopted RB's EB through the handlers peers'
	// EBs go through: the announcement (rb), the body, the closure's txs
	// (validated).
	Publish(rb *block.Header, eb *block.EBBody, closure []block.HashedTx) error
	// ClosureTxs returns the closure of the EB at p, in EB order, decoded,
	// each with whether this node verified its witnesses already, if all
	// of it is held.
	ClosureTxs(p block.Point) (txs []ledger.BatchTx, held bool, err error)
	// ClosureChanged returns a channel closed when the next body or closure
	// is held here: a vote may be due.
	ClosureChanged() <-chan struct{}
	// MarkVerified records that these closure txs' witnesses verified.
	MarkVerified(txHashes []block.Hash)
	// Votes returns the votes relayed for an RB; Vote relays this node's.
	Votes(rbHash block.Hash) []block.Vote
	Vote(v block.Vote) error
	// Equivocated reports whether two headers were seen for one slot and
	// issuer.
	Equivocated(slot uint64, issuer block.Bytes32) bool
	// RecordValidated notes when this node's check of the closure of the
	// EB at p passed; RecordVote what became of its vote on it (one of the
	// Vote* outcomes), and when; RecordCertify what a leader saw of its
	// votes.
	RecordValidated(p block.Point, at time.Time)
	RecordVote(p block.Point, outcome string, at time.Time)
	RecordCertify(p block.Point, attempt CertifyAttempt)
	// LatestWindow is the newest EB whose voting window has closed at now:
	// the slot of its RB, and whether this node missed it (did not hold and
	// check its closure in time); ok is false when there is none.
	LatestWindow(now time.Time) (slot uint64, missed, ok bool)
}

// Chain takes the blocks the forge produces, through the path a peer's
// block takes.
type Chain interface {
	// AddBlock adds blk and reports whether chain selection adopted it.
	AddBlock(blk *block.Block) (adopted bool, err error)
}

// Mempool is where the forge takes its txs from; the mempool serves it.
type Mempool interface {
	// Txs yields the txs of one snapshot in ticket order, and gives the tip
	// that snapshot was validated against: in that order, each applies on
	// that tip's ledger after the ones before it.
	Txs() (txs iter.Seq[*ledger.Tx], validatedAt block.Tip)
	// RemoveTxs drops the txs with these hashes and those that spend them.
	RemoveTxs(ctx context.Context, txHashes []block.Hash) ([]block.Hash, error)
}

// Options configure a Forger. Validator, Ledger, Chain, IssuerKey and
// VRFKey are required.
type Options struct {
	Validator *consensus.Validator
	Ledger    Ledger
	Chain     Chain
	IssuerKey ed25519.PrivateKey
	VRFKey    *vrf.SecretKey
	// Mempool supplies txs; nil forges empty blocks.
	Mempool Mempool
	// IsInvalidBlock tells, from an error of Chain.AddBlock, that the chain
	// judged the block invalid: the forge then drops the block's txs from
	// the mempool, so the next block is not built from them again. Required
	// with Mempool.
	IsInvalidBlock func(error) bool
	// Params are the ledger rules the block's txs must pass; default
	// ledger.DefaultParams().
	Params *ledger.Params
	// RBMaxBodyBytes bounds a forged body; default 90,112.
	RBMaxBodyBytes int
	// EBLimits bound the endorser block an RB announces when the mempool
	// holds more than the RB carries; zero MaxTxs forges no EBs. Its
	// Encoding is ignored: EBs, headers and certificates are encoded as the
	// Validator's genesis says.
	EBLimits block.EBLimits
	// Leios is the node's Leios pipeline: forged EBs are published through
	// it, and certificates built from the votes it relays. Required with
	// EBLimits or Voter; nil forges neither EBs nor CertRBs.
	Leios Leios
	// Voter is this pool's committee seat and BLS key; nil: the pool does
	// not vote.
	Voter *consensus.Voter
	// Ready says whether the node may forge: a node that has just started
	// must first learn its peers' chain, or it would forge a fork from a
	// stale tip that peers more than k blocks ahead refuse. Nil: always.
	Ready func() bool
	// Equivocate makes this pool a faulty one, for the devnet's chaos mode
	// only: each block it forges that announces an EB of two or more txs is
	// followed by a second header for the same slot, announcing another EB
	// (one tx fewer), published but never adopted. Peers must see two
	// headers for one (slot, issuer) and certify neither EB.
	Equivocate bool
	// Trace, if set, receives the blocks, EBs and votes this pool
	// generates, in the Leios simulators' trace format.
	Trace *simtrace.Writer
	// Now is the wall clock; default time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer, if set, takes the forger's metrics (metrics.go). A
	// process that runs several pools' forgers gives it to one at most.
	Registerer prometheus.Registerer
}

// Forger produces this pool's blocks.
type Forger struct {
	opts   Options
	issuer block.Bytes32
	vrfPub block.Bytes32

	forged  atomic.Uint64
	adopted atomic.Uint64
	ebs     atomic.Uint64
	certs   atomic.Uint64

	ballot ballot // the vote on the tip RB's EB; the vote loop's goroutine only
	budget *ebBudget
}

// New checks that the keys belong to a registered pool.
func New(opts Options) (*Forger, error) {
	if opts.Validator == nil || opts.Ledger == nil || opts.Chain == nil || opts.IssuerKey == nil || opts.VRFKey == nil {
		return nil, errors.New("forge: Validator, Ledger, Chain, IssuerKey and VRFKey are required")
	}
	if opts.Mempool != nil && opts.IsInvalidBlock == nil {
		return nil, errors.New("forge: Mempool without IsInvalidBlock")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Params == nil {
		p := ledger.DefaultParams()
		opts.Params = &p
	}
	if (opts.EBLimits.MaxTxs > 0 || opts.Voter != nil) && opts.Leios == nil {
		return nil, errors.New("forge: EBLimits or Voter without Leios")
	}
	// EBs are encoded as the network's genesis says, whatever the limits
	// were given with: peers refuse any other.
	opts.EBLimits.Encoding = opts.Validator.Leios().Encoding
	if opts.RBMaxBodyBytes <= 0 {
		opts.RBMaxBodyBytes = consensus.DefaultLeiosParams().RBMaxBodyBytes
	}
	f := &Forger{opts: opts, budget: newEBBudget()}
	copy(f.issuer[:], opts.IssuerKey.Public().(ed25519.PublicKey))
	f.vrfPub = block.Bytes32(opts.VRFKey.Public())
	pool, ok := opts.Validator.Pool(f.issuer)
	if !ok {
		return nil, fmt.Errorf("forge: issuer key %x is not a genesis pool", f.issuer[:8])
	}
	if pool.VRFVKey != vrf.PublicKey(f.vrfPub) {
		return nil, fmt.Errorf("forge: VRF key is not pool %s's", pool.Name)
	}
	if opts.Registerer != nil {
		if err := f.registerMetrics(opts.Registerer); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Forged is the number of blocks this forger built.
func (f *Forger) Forged() uint64 { return f.forged.Load() }

// Adopted is the number of forged blocks chain selection adopted when they
// were added.
func (f *Forger) Adopted() uint64 { return f.adopted.Load() }

// EBs is the number of endorser blocks this forger announced.
func (f *Forger) EBs() uint64 { return f.ebs.Load() }

// Certificates is the number of CertRBs this forger built.
func (f *Forger) Certificates() uint64 { return f.certs.Load() }

// Run forges, and votes if the pool holds a seat, until ctx is cancelled:
// the forge wakes at the start of every slot, the voter also as soon as a
// closure completes or the tip changes, so a vote waits for nothing but
// its window and its closure.
func (f *Forger) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		cpuwork.Do(ctx, cpuwork.Forge, f.forgeLoop)
		return nil
	})
	if f.opts.Voter != nil {
		g.Go(func() error {
			cpuwork.Do(ctx, cpuwork.Voting, f.voteLoop)
			return nil
		})
	}
	return g.Wait()
}

func (f *Forger) forgeLoop(ctx context.Context) {
	clock := f.opts.Validator.Clock()
	slot := clock.SlotAt(f.opts.Now())
	for ctx.Err() == nil {
		slot++
		if !f.sleepUntil(ctx, clock.SlotStart(slot), nil, nil) {
			return
		}
		// Skip slots missed while the process was descheduled: forging for a
		// slot already past would only produce a block peers see late.
		if now := clock.SlotAt(f.opts.Now()); now > slot {
			slot = now
		}
		if f.opts.Ready != nil && !f.opts.Ready() {
			continue
		}
		if f.opts.Leios != nil {
			if latest, missed, ok := f.opts.Leios.LatestWindow(f.opts.Now()); ok {
				f.budget.observe(latest, missed)
			}
		}
		if _, err := f.ForgeSlot(slot); err != nil {
			f.opts.Logger.Warn("forge: block not adopted", "slot", slot, "err", err)
		}
	}
}

func (f *Forger) voteLoop(ctx context.Context) {
	clock := f.opts.Validator.Clock()
	for ctx.Err() == nil {
		// Taken before the vote, so no change is missed in between.
		tipChanged, closureChanged := f.opts.Ledger.TipChanged(), f.opts.Leios.ClosureChanged()
		slot := clock.SlotAt(f.opts.Now())
		if f.opts.Ready == nil || f.opts.Ready() {
			f.VoteSlot(slot)
		}
		if !f.sleepUntil(ctx, clock.SlotStart(slot+1), tipChanged, closureChanged) {
			return
		}
	}
}

// sleepUntil waits until at, or until either channel is closed; it
// reports false if ctx ended first.
func (f *Forger) sleepUntil(ctx context.Context, at time.Time, a, b <-chan struct{}) bool {
	wait := at.Sub(f.opts.Now())
	if wait <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
	case <-a:
	case <-b:
	}
	return true
}

// ForgeSlot runs the leader check for slot and, if this pool leads, forges a
// block on the current tip and adds it to the chain. It returns nil when the
// pool does not lead or the tip is not older than slot.
func (f *Forger) ForgeSlot(slot uint64) (*block.Block, error) {
	proof, output := vrf.Prove(f.opts.VRFKey, f.opts.Validator.VRFInput(slot))
	if !f.opts.Validator.IsLeader(f.issuer, output) {
		return nil, nil
	}
	// The time each step took goes into the log: a block reaches its peers
	// only once all of them are done, and its EB's voting window runs from
	// the slot's start.
	start := f.opts.Now()
	view, tip, release, err := f.opts.Ledger.TipUTxO()
	if err != nil {
		return nil, fmt.Errorf("forge: slot %d: reading the tip's ledger: %w", slot, err)
	}
	defer release()
	if !tip.Point.IsOrigin() && tip.Point.Slot >= slot {
		return nil, nil
	}
	// A CertRB certifies the EB of the tip and carries no txs of its own;
	// the EB it announces is filled from txs valid after that closure.
	cert, closureDiff := f.certify(view, tip, slot)
	certified := f.opts.Now()
	sel := f.selectTxs(view, tip, slot, closureDiff)
	eb, err := f.buildEB(sel.eb)
	if err != nil {
		return nil, fmt.Errorf("forge: slot %d: %w", slot, err)
	}
	blk := f.build(slot, tip, block.VRFResult{Output: output, Proof: proof}, sel.rb, eb, cert)
	built := f.opts.Now()
	f.forged.Add(1)
	// Written before the block is added: adding it is what sends it, and
	// a trace's readers measure each receipt from the generation.
	f.traceGenerated(blk, eb)
	adopted, err := f.opts.Chain.AddBlock(blk)
	added := f.opts.Now()
	if err != nil {
		if f.opts.Mempool != nil && f.opts.IsInvalidBlock(err) {
			f.dropTxs(sel.rb)
		}
		return blk, fmt.Errorf("forge: slot %d: %w", slot, err)
	}
	if adopted {
		f.adopted.Add(1)
	}
	if cert != nil {
		f.certs.Add(1)
	}
	if eb != nil {
		closure := make([]block.HashedTx, len(sel.eb))
		for i, tx := range sel.eb {
			closure[i] = block.HashedTx{Hash: tx.Hash(), Bytes: tx.Bytes()}
		}
		if err := f.opts.Leios.Publish(blk.Header, eb, closure); err != nil {
			f.opts.Logger.Error("forge: publishing the EB", "slot", slot, "err", err)
		}
		f.ebs.Add(1)
		if f.opts.Equivocate && len(closure) > 1 {
			f.equivocate(blk, closure[:len(closure)-1])
		}
	}
	if t := f.opts.Trace; t.On() {
		t.Emit(simtrace.CPU{Node: t.Node(), CPUTimeS: added.Sub(start).Seconds(), TaskType: "GenRB", ID: blk.Hash().String()})
	}
	ms := func(from, to time.Time) int64 { return to.Sub(from).Milliseconds() }
	f.opts.Logger.Info("forged block", "slot", slot, "number", blk.Header.BlockNumber,
		"hash", blk.Hash().Short(), "txs", len(sel.rb), "ebTxs", len(sel.eb), "certified", cert != nil, "adopted", adopted,
		"lateMs", ms(f.opts.Validator.Clock().SlotStart(slot), start), "certifyMs", ms(start, certified),
		"selectMs", ms(certified, built), "addMs", ms(built, added), "publishMs", ms(added, f.opts.Now()),
		"ebShare", f.EBShare())
	return blk, nil
}

// traceGenerated writes what a forged block generated: the RB and the EB
// it announces, named as the trace names them (simtrace): the EB by the
// RB's id, and a certified EB by its RB's, the parent's.
func (f *Forger) traceGenerated(blk *block.Block, eb *block.EBBody) {
	t := f.opts.Trace
	if !t.On() {
		return
	}
	h := blk.Header
	rb := simtrace.RBGenerated{ID: blk.Hash().String(), Slot: h.Slot, Producer: t.Node(), SizeBytes: len(blk.Bytes()),
		TxPayloadBytes: len(blk.Body.Bytes())}
	if h.PrevHash != nil {
		rb.Parent = &simtrace.BlockRef{ID: h.PrevHash.String()}
	}
	if h.PrevHash != nil && blk.Body.Certificate != nil {
		if parent, err := f.opts.Ledger.Block(*h.PrevHash); err == nil {
			if _, ok := consensus.CertifiedPoint(blk, parent.Header); ok {
				rb.Endorsement = &simtrace.Endorsement{EB: simtrace.BlockRef{ID: h.PrevHash.String()}}
			}
		}
	}
	t.Emit(rb)
	if eb != nil {
		t.Emit(simtrace.EBGenerated{ID: rb.ID, Slot: h.Slot, Producer: t.Node(), SizeBytes: int(eb.Size()),
			InputBlocks: []simtrace.BlockRef{}, EndorserBlocks: []simtrace.BlockRef{}})
	}
}

// equivocate publishes a second header for blk's slot announcing an EB of
// closure, a part of blk's: Options.Equivocate.
func (f *Forger) equivocate(blk *block.Block, closure []block.HashedTx) {
	entries := make([]block.EBTx, len(closure))
	for i, tx := range closure {
		entries[i] = block.EBTx{TxHash: tx.Hash, Size: uint32(len(tx.Bytes))}
	}
	eb, err := block.NewEBBody(entries, f.opts.EBLimits)
	if err != nil {
		f.opts.Logger.Error("forge: equivocating", "err", err)
		return
	}
	// The same body and VRF proof, another announcement: a header as
	// valid as the first.
	hb := blk.Header.HeaderBody
	announcement := eb.Announcement()
	hb.Announcement = &announcement
	twin := block.NewHeader(hb, f.opts.IssuerKey)
	err = f.opts.Leios.Publish(twin, eb, closure)
	f.opts.Logger.Warn("forge: equivocated (devnet chaos)", "slot", hb.Slot, "block", blk.Hash().Short(), "twin", twin.Hash().Short(), "err", err)
}

// buildEB makes the EB body of txs; nil when there are none.
func (f *Forger) buildEB(txs []*ledger.Tx) (*block.EBBody, error) {
	if len(txs) == 0 {
		return nil, nil
	}
	entries := make([]block.EBTx, len(txs))
	for i, tx := range txs {
		entries[i] = block.EBTx{TxHash: tx.Hash(), Size: uint32(tx.Size())}
	}
	return block.NewEBBody(entries, f.opts.EBLimits)
}

func (f *Forger) build(slot uint64, tip block.Tip, vrfResult block.VRFResult, txs []*ledger.Tx, eb *block.EBBody, cert *block.Certificate) *block.Block {
	raw := make([]block.RawCBOR, len(txs))
	for i, tx := range txs {
		raw[i] = tx.Bytes()
	}
	body := block.NewBody(raw, cert)
	hb := block.HeaderBody{
		BlockNumber:    tip.BlockNumber + 1,
		Slot:           slot,
		IssuerVKey:     f.issuer,
		VRFVKey:        f.vrfPub,
		VRF:            vrfResult,
		BodySize:       uint64(len(body.Bytes())),
		BodyHash:       body.Hash(),
		LeiosCertified: cert != nil,
		Encoding:       f.opts.Validator.Leios().Encoding,
	}
	if !tip.Point.IsOrigin() {
		prev := tip.Point.Hash
		hb.PrevHash = &prev
	}
	if eb != nil {
		announcement := eb.Announcement()
		hb.Announcement = &announcement
	}
	return block.NewBlock(block.NewHeader(hb, f.opts.IssuerKey), body)
}
