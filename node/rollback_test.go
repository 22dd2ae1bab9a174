package node

import (
	"context"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/waittest"
)

// A rollback past a CertRB returns its certified closure's txs to the
// mempool. Node A forges an RB announcing an EB, votes for it (with a
// quorum of one half, its own vote certifies) and forges the CertRB; node
// B builds a longer chain on the same RB without it; when A switches to
// that chain, the closure's txs come back into A's mempool.
func TestRollbackPastCertRBReturnsTheClosure(t *testing.T) {
	sc := newCertRBScene(t)
	a, b := sc.a, sc.b
	if _, err := a.mempool.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, raw := range sc.closure {
		if a.mempool.Has(block.HashBytes(raw)) {
			t.Fatal("a certified tx is still in the mempool after the sync")
		}
	}

	// B's chain: the same announcing RB, then two blocks of its own.
	if _, err := b.chain.AddBlock(sc.announcing); err != nil {
		t.Fatal(err)
	}
	fork := sc.forgeOnB(sc.slot+1, sc.slot+2)
	ctx, cancel := context.WithCancel(context.Background())
	synced := make(chan error, 1)
	go func() { synced <- a.mempool.Run(ctx) }()
	defer func() { cancel(); must(t, <-synced) }()
	sc.switchA(fork)
	for _, raw := range sc.closure {
		waittest.Until(t, "every tx of the abandoned CertRB's closure back in the mempool", func() bool { return a.mempool.Has(block.HashBytes(raw)) })
	}
}

// A rollback to a fork that certifies the same EB — a slot battle between
// two CertRBs — gives none of its closure back: the closure stays on the
// ledger. Node B, holding the EB and A's vote, forges a rival CertRB of the
// same EB and a block on it; A switches to B's chain.
func TestRollbackToARivalCertRBKeepsTheClosure(t *testing.T) {
	sc := newCertRBScene(t)
	a, b := sc.a, sc.b
	oldTip := a.chain.Tip()
	if _, err := b.chain.AddBlock(sc.announcing); err != nil {
		t.Fatal(err)
	}
	body, held, err := a.leios.Body(sc.eb.Hash)
	if err != nil || !held {
		t.Fatalf("the EB's body: %v", err)
	}
	must(t, b.leios.Publish(sc.announcing.Header, body, block.HashTxs(sc.closure)))
	must(t, b.leios.Vote(sc.vote))
	fork := sc.forgeOnB(sc.certAt+1, sc.certAt+2)
	if fork[0].Body.Certificate == nil {
		t.Fatal("B's first block is no CertRB")
	}
	sc.switchA(fork)
	abandoned, err := a.abandonedTxs(oldTip)
	must(t, err)
	inClosure := map[block.Hash]bool{}
	for _, raw := range sc.closure {
		inClosure[block.HashBytes(raw)] = true
	}
	for _, tx := range abandoned {
		if inClosure[block.Hash(tx.Hash())] {
			t.Fatalf("a tx of the closure both forks certify is given back to the mempool (%d txs given back)", len(abandoned))
		}
	}
}

// certRBScene is two unconnected nodes, A and B, each leading every slot,
// a quorum one vote of two; A has forged an RB announcing an EB of ten
// payments at slot, voted for it, and forged the CertRB at certAt.
type certRBScene struct {
	t            *testing.T
	a, b         *Node
	clock        consensus.Clock
	slot, certAt uint64
	announcing   *block.Block
	eb           block.Point
	closure      [][]byte
	vote         block.Vote
}

func newCertRBScene(t *testing.T) *certRBScene {
	configs := testNet(t, 2, 100*time.Millisecond, func(g *consensus.Genesis) {
		g.ActiveSlotsCoeff = "1" // both pools lead every slot
		g.Leios.RBMaxBodyBytes = 700
		g.Leios.QuorumStakeFraction = "0.5" // one vote of two
		g.SystemStart = time.Now().Add(-time.Second).UTC()
	})
	var ns []*Node
	for _, cfg := range configs {
		cfg.HTTPAddr = ""
		n, err := New(cfg, Options{Logger: quietLogger()})
		must(t, err)
		t.Cleanup(func() { n.close() })
		ns = append(ns, n)
	}
	sc := &certRBScene{t: t, a: ns[0], b: ns[1], clock: ns[0].validator.Clock()}
	a := sc.a
	for _, tx := range payments(t, 10) {
		must(t, a.mempool.Add(context.Background(), tx))
	}
	sc.slot = sc.clock.SlotAt(time.Now()) + 1
	sc.waitSlot(sc.slot)
	announcing, err := a.forger.ForgeSlot(sc.slot)
	if err != nil || announcing == nil || announcing.Header.Announcement == nil {
		t.Fatalf("forging the announcing RB: %v %v", announcing, err)
	}
	sc.announcing = announcing
	sc.eb = block.Point{Slot: sc.slot, Hash: announcing.Header.Announcement.EbHash}
	closure, held, err := a.leios.Closure(sc.eb)
	if err != nil || !held || len(closure) == 0 {
		t.Fatalf("the forged EB's closure is not held: %v", err)
	}
	sc.closure = closure
	sc.waitSlot(sc.slot + 1)
	a.forger.VoteSlot(sc.slot + 1)
	votes := a.leios.Votes(announcing.Hash())
	if len(votes) != 1 {
		t.Fatal("no vote for the EB")
	}
	sc.vote = votes[0]
	sc.certAt = sc.slot + uint64(a.genesis.Leios.MinCertGap)
	sc.waitSlot(sc.certAt)
	certRB, err := a.forger.ForgeSlot(sc.certAt)
	if err != nil || certRB == nil || certRB.Body.Certificate == nil || a.chain.Tip().Point != certRB.Point() {
		t.Fatalf("forging the CertRB: %v %v", certRB, err)
	}
	return sc
}

// waitSlot waits for the start of slot: the forge leads slots on the clock.
func (sc *certRBScene) waitSlot(slot uint64) { time.Sleep(time.Until(sc.clock.SlotStart(slot))) }

// forgeOnB has B forge a block at each of slots, in turn.
func (sc *certRBScene) forgeOnB(slots ...uint64) []*block.Block {
	var fork []*block.Block
	for _, slot := range slots {
		sc.waitSlot(slot)
		blk, err := sc.b.forger.ForgeSlot(slot)
		if err != nil || blk == nil {
			sc.t.Fatalf("forging B's block at slot %d: %v %v", slot, blk, err)
		}
		fork = append(fork, blk)
	}
	return fork
}

// switchA gives A the blocks of fork, a longer chain than its own, and
// checks that A switched to it.
func (sc *certRBScene) switchA(fork []*block.Block) {
	for _, blk := range fork {
		if _, err := sc.a.chain.AddBlock(blk); err != nil {
			sc.t.Fatal(err)
		}
	}
	if sc.a.chain.Tip().Point != fork[len(fork)-1].Point() {
		sc.t.Fatal("A did not switch to B's chain")
	}
}
