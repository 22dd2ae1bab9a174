package forge

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/vrf"
)

// Chain is what the forge needs of the chain database.
type Chain interface {
	Tip() block.Tip
	AddBlock(blk *block.Block) (chaindb.AddResult, error)
}

// Options configure a Forger. Validator, Chain, IssuerKey and VRFKey are
// required.
type Options struct {
	Validator *consensus.Validator
	Chain     Chain
	IssuerKey ed25519.PrivateKey
	VRFKey    *vrf.SecretKey
	// Now is the wall clock; default time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Forger produces this pool's blocks.
type Forger struct {
	opts   Options
	issuer block.Bytes32
	vrfPub block.Bytes32

	forged  atomic.Uint64
	adopted atomic.Uint64
}

// New checks that the keys belong to a registered pool.
func New(opts Options) (*Forger, error) {
	if opts.Validator == nil || opts.Chain == nil || opts.IssuerKey == nil || opts.VRFKey == nil {
		return nil, errors.New("forge: Validator, Chain, IssuerKey and VRFKey are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	f := &Forger{opts: opts}
	copy(f.issuer[:], opts.IssuerKey.Public().(ed25519.PublicKey))
	f.vrfPub = block.Bytes32(opts.VRFKey.Public())
	pool, ok := opts.Validator.Pool(f.issuer)
	if !ok {
		return nil, fmt.Errorf("forge: issuer key %x is not a genesis pool", f.issuer[:8])
	}
	if pool.VRFVKey != vrf.PublicKey(f.vrfPub) {
		return nil, fmt.Errorf("forge: VRF key is not pool %s's", pool.Name)
	}
	return f, nil
}

// Forged is the number of blocks this forger built.
func (f *Forger) Forged() uint64 { return f.forged.Load() }

// Adopted is the number of forged blocks chain selection adopted when they
// were added.
func (f *Forger) Adopted() uint64 { return f.adopted.Load() }

// Run forges until ctx is cancelled, waking at the start of every slot.
func (f *Forger) Run(ctx context.Context) error {
	clock := f.opts.Validator.Clock()
	slot := clock.SlotAt(f.opts.Now())
	for {
		slot++
		wait := clock.SlotStart(slot).Sub(f.opts.Now())
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil
			case <-timer.C:
			}
		}
		// Skip slots missed while the process was descheduled: forging for a
		// slot already past would only produce a block peers see late.
		if now := clock.SlotAt(f.opts.Now()); now > slot {
			slot = now
		}
		if _, err := f.ForgeSlot(slot); err != nil {
			f.opts.Logger.Warn("forge: block not adopted", "slot", slot, "err", err)
		}
	}
}

// ForgeSlot runs the leader check for slot and, if this pool leads, forges a
// block on the current tip and adds it to the chain. It returns nil when the
// pool does not lead or the tip is not older than slot.
func (f *Forger) ForgeSlot(slot uint64) (*block.Block, error) {
	proof, output := vrf.Prove(f.opts.VRFKey, f.opts.Validator.VRFInput(slot))
	if !f.opts.Validator.IsLeader(f.issuer, output) {
		return nil, nil
	}
	tip := f.opts.Chain.Tip()
	if !tip.Point.IsOrigin() && tip.Point.Slot >= slot {
		return nil, nil
	}
	blk := f.build(slot, tip, block.VRFResult{Output: output, Proof: proof})
	f.forged.Add(1)
	res, err := f.opts.Chain.AddBlock(blk)
	if err != nil {
		return blk, fmt.Errorf("forge: slot %d: %w", slot, err)
	}
	if res.Adopted {
		f.adopted.Add(1)
	}
	f.opts.Logger.Info("forged block", "slot", slot, "number", blk.Header.BlockNumber,
		"hash", blk.Hash().Short(), "adopted", res.Adopted)
	return blk, nil
}

func (f *Forger) build(slot uint64, tip block.Tip, vrfResult block.VRFResult) *block.Block {
	body := block.NewBody(nil, nil)
	hb := block.HeaderBody{
		BlockNumber: tip.BlockNumber + 1,
		Slot:        slot,
		IssuerVKey:  f.issuer,
		VRFVKey:     f.vrfPub,
		VRF:         vrfResult,
		BodySize:    uint64(len(body.Bytes())),
		BodyHash:    body.Hash(),
	}
	if !tip.Point.IsOrigin() {
		prev := tip.Point.Hash
		hb.PrevHash = &prev
	}
	return block.NewBlock(block.NewHeader(hb, f.opts.IssuerKey), body)
}
