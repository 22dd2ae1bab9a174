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
		defer n.close()
		ns = append(ns, n)
	}
	a, b := ns[0], ns[1]
	for _, tx := range payments(t, 10) {
		must(t, a.mempool.Add(context.Background(), tx))
	}

	clock := a.validator.Clock()
	s := clock.SlotAt(time.Now()) + 1
	waitSlot := func(slot uint64) { time.Sleep(time.Until(clock.SlotStart(slot))) }
	waitSlot(s)
	announcing, err := a.forger.ForgeSlot(s)
	if err != nil || announcing == nil || announcing.Header.Announcement == nil {
		t.Fatalf("forging the announcing RB: %v %v", announcing, err)
	}
	eb := block.Point{Slot: s, Hash: announcing.Header.Announcement.EbHash}
	closure, held, err := a.leios.Closure(eb)
	if err != nil || !held || len(closure) == 0 {
		t.Fatalf("the forged EB's closure is not held: %v", err)
	}
	waitSlot(s + 1)
	a.forger.VoteSlot(s + 1)
	if len(a.leios.Votes(announcing.Hash())) != 1 {
		t.Fatal("no vote for the EB")
	}
	certAt := s + uint64(a.genesis.Leios.MinCertGap)
	waitSlot(certAt)
	certRB, err := a.forger.ForgeSlot(certAt)
	if err != nil || certRB == nil || certRB.Body.Certificate == nil || a.chain.Tip().Point != certRB.Point() {
		t.Fatalf("forging the CertRB: %v %v", certRB, err)
	}
	if _, err := a.mempool.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, raw := range closure {
		if a.mempool.Has(block.HashBytes(raw)) {
			t.Fatal("a certified tx is still in the mempool after the sync")
		}
	}

	// B's chain: the same announcing RB, then two blocks of its own.
	if _, err := b.chain.AddBlock(announcing); err != nil {
		t.Fatal(err)
	}
	var fork []*block.Block
	for _, slot := range []uint64{s + 1, s + 2} {
		blk, err := b.forger.ForgeSlot(slot)
		if err != nil || blk == nil {
			t.Fatalf("forging B's block at slot %d: %v %v", slot, blk, err)
		}
		fork = append(fork, blk)
	}
	ctx, cancel := context.WithCancel(context.Background())
	synced := make(chan error, 1)
	go func() { synced <- a.mempool.Run(ctx) }()
	defer func() { cancel(); must(t, <-synced) }()
	for _, blk := range fork {
		if _, err := a.chain.AddBlock(blk); err != nil {
			t.Fatal(err)
		}
	}
	if a.chain.Tip().Point != fork[1].Point() {
		t.Fatal("A did not switch to the longer chain")
	}
	for _, raw := range closure {
		waittest.Until(t, "every tx of the abandoned CertRB's closure back in the mempool", func() bool { return a.mempool.Has(block.HashBytes(raw)) })
	}
}
