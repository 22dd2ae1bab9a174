package node

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	"github.com/multiformats/go-multiaddr"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/keys"
)

// Ten producers on mocknet links (20 ms, a random graph of degree about
// four), every one a committee member with a tenth of the stake, fed txs
// beyond what an RB carries: EBs are announced, voted on and certified.
// Every EB whose next block came after the certification gap, forged by a
// node that held a quorum of votes for it, is certified by that block,
// every node's chain holds the same CertRBs, and every node gives each EB
// of the immutable chain its settled fate — certified by that block, or
// not with a reason — and any other EB whose window passed one too.
func TestTenNodesCertifyOnMocknet(t *testing.T) {
	const nodes = 10
	configs := testNet(t, nodes, 100*time.Millisecond, func(g *consensus.Genesis) {
		g.ActiveSlotsCoeff = "0.1"
		g.SecurityParam = 5
		g.Leios.RBMaxBodyBytes = 700 // three of the test's txs
		// A closure crosses the graph's hops (20 ms links, a round trip
		// per request) in a few hundred ms: a vote window of 0.8 s, with
		// the certificate due after it.
		g.Leios.LVote, g.Leios.MinCertGap = 8, 14
		g.SystemStart = time.Now().Add(2 * time.Second).UTC()
	})
	mn := mocknet.New()
	defer mn.Close()
	mn.SetLinkDefaults(mocknet.LinkOptions{Latency: 20 * time.Millisecond})
	var ids []string
	hosts := make([]Options, nodes)
	for i, cfg := range configs {
		key, err := keys.ReadSigningKey(cfg.NodeKeyFile, keys.Node)
		must(t, err)
		sk, err := crypto.UnmarshalEd25519PrivateKey(ed25519.PrivateKey(key))
		must(t, err)
		h, err := mn.AddPeer(sk, multiaddr.StringCast(fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", 5000+i)))
		must(t, err)
		hosts[i] = Options{Logger: quietLogger(), Libp2p: h}
		ids = append(ids, fmt.Sprintf("/ip4/127.0.0.1/tcp/%d/p2p/%s", 5000+i, h.ID()))
		cfg.HTTPAddr = ""
	}
	// A random connected graph: each node links to one earlier node, and
	// ten links more; the higher index dials.
	rng := rand.New(rand.NewPCG(9, 9))
	topology := make([]config.Topology, nodes)
	linked := map[[2]int]bool{}
	link := func(a, b int) {
		a, b = min(a, b), max(a, b)
		if a == b || linked[[2]int{a, b}] {
			return
		}
		linked[[2]int{a, b}] = true
		_, err := mn.LinkPeers(hosts[a].Libp2p.ID(), hosts[b].Libp2p.ID())
		must(t, err)
		topology[b].Peers = append(topology[b].Peers, ids[a])
	}
	for i := 1; i < nodes; i++ {
		link(rng.IntN(i), i)
	}
	for range nodes {
		link(rng.IntN(nodes), rng.IntN(nodes))
	}
	for i, cfg := range configs {
		must(t, config.WriteJSON(cfg.TopologyFile, topology[i]))
	}
	// Each node's issuer key, to find who forged a block.
	forgedBy := map[block.Bytes32]int{}
	for i, cfg := range configs {
		key, err := keys.ReadSigningKey(cfg.IssuerKeyFile, keys.StakePool)
		must(t, err)
		forgedBy[block.Bytes32(key.Public().(ed25519.PublicKey))] = i
	}

	ctx, cancel := context.WithCancel(context.Background())
	g, gctx := errgroup.WithContext(ctx)
	var ns []*Node
	for i, cfg := range configs {
		n, err := New(cfg, hosts[i])
		must(t, err)
		ns = append(ns, n)
		g.Go(func() error { return n.Run(gctx) })
	}
	defer func() {
		cancel()
		must(t, g.Wait())
	}()

	// A chain of txs from the payer into node 0's mempool, paced by its
	// chain rather than the wall clock: six more — twice what an RB
	// carries, so blocks announce EBs — each time its tip changes, until
	// every node holds as immutable a block carrying a certificate.
	txs := payments(t, 250)
	deadline := time.After(waittest.Hang)
	var lowest uint64
	for {
		changed := ns[0].chain.TipChanged() // before reading, so no change is missed
		lowest = ns[0].chain.ImmutableTip().BlockNumber
		for _, n := range ns {
			lowest = min(lowest, n.chain.ImmutableTip().BlockNumber)
		}
		if certificateUpTo(t, ns[0], lowest) {
			break
		}
		for range min(6, len(txs)) {
			addCtx, cancelAdd := context.WithTimeout(ctx, waittest.Hang)
			must(t, ns[0].mempool.Add(addCtx, txs[0]))
			cancelAdd()
			txs = txs[1:]
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no EB certified by a block all nodes hold as immutable after %v, a hang (immutable everywhere: %d blocks)", waittest.Hang, lowest)
		}
	}

	// Walk node 0's chain up to the lowest immutable tip: it no longer
	// changes.
	lp := ns[0].genesis.Leios
	quorum := nodes * 3 / 4
	if nodes*3%4 != 0 {
		quorum++
	}
	var certified, announced int
	var prev *block.Block
	for number := uint64(1); number <= lowest; number++ {
		blk, err := ns[0].chain.BlockByNumber(number)
		must(t, err)
		for i, n := range ns {
			other, err := n.chain.BlockByNumber(number)
			if err != nil || other.Hash() != blk.Hash() {
				t.Fatalf("node %d's chain differs from node 0's at block %d", i, number)
			}
		}
		if prev != nil && prev.Header.Announcement != nil {
			announced++
			eb := block.Point{Slot: prev.Header.Slot, Hash: prev.Header.Announcement.EbHash}
			leader := forgedBy[blk.Header.IssuerVKey]
			p, ok := consensus.CertifiedPoint(blk, prev.Header)
			outcomes, relayed, fates := map[string]int{}, make([]int, nodes), map[string]int{}
			var attempt *apitypes.CertifyAttempt // the leader's, as it forged blk
			for i, n := range ns {
				fate := apitypes.EBFate{Fate: "not listed"}
				for _, e := range n.leios.EBTimes() {
					if e.Slot == eb.Slot && e.EbHash == eb.Hash.String() {
						outcomes[e.Vote]++
						relayed[i] = e.Votes
						fate = *e.Fate
						if i == leader && e.Certify != nil && e.Certify.Slot == blk.Header.Slot {
							attempt = e.Certify
						}
					}
				}
				fates[fate.Fate+" "+fate.Reason]++
				// Its next block is immutable: every node's fate is settled,
				// and certified exactly when that block certifies it.
				switch {
				case ok && p == eb:
					if fate.Fate != apitypes.FateCertified || fate.CertifiedBy == nil || fate.CertifiedBy.Hash != blk.Hash().String() || fate.CertifiedBy.Number != number {
						t.Errorf("EB %s, certified by block %d: node %d says %+v", eb, number, i, fate)
					}
				case fate.Fate != apitypes.FateNotCertified || fate.Reason == "":
					t.Errorf("EB %s, not certified by block %d: node %d says %+v", eb, number, i, fate)
				}
			}
			gap := blk.Header.Slot - prev.Header.Slot
			t.Logf("EB at slot %d: next block %d slots later by node %d; the nodes' votes: %v; votes relayed per node: %v; fates: %v",
				eb.Slot, gap, leader, outcomes, relayed, fates)
			switch {
			case ok && p == eb:
				certified++
			case gap >= uint64(lp.MinCertGap) && attempt != nil && attempt.Votes >= quorum &&
				(attempt.Outcome == apitypes.CertifyNoQuorum || attempt.Outcome == apitypes.CertifyNotCertifying):
				// What counts is what the leader held as it forged: on
				// two busy cores a vote can reach it only after, or after
				// its window closed and then not be relayed.
				t.Errorf("EB %s: node %d held %d of %d votes as it forged %d slots later, yet found %q",
					eb, leader, attempt.Votes, nodes, gap, attempt.Outcome)
			}
		}
		prev = blk
	}
	t.Logf("%d blocks, %d EBs announced, %d certified", lowest, announced, certified)
	if certified == 0 {
		t.Error("no EB certified up to the immutable tip")
	}
	// On each node, every EB whose voting window passed has a settled fate,
	// unless its RB is still the tip: the next block may yet certify it.
	for i, n := range ns {
		tip, ebs := n.chain.Tip(), n.leios.EBTimes()
		for n.chain.Tip() != tip { // the fates were read on another tip
			tip, ebs = n.chain.Tip(), n.leios.EBTimes()
		}
		for _, e := range ebs {
			if e.Fate.Fate == apitypes.FatePending && time.Now().After(e.Deadline) &&
				e.RbHash != tip.Point.Hash.String() && e.Slot < tip.Point.Slot {
				t.Errorf("node %d: EB %d/%s pending after its window, its RB %s below the tip %s", i, e.Slot, e.EbHash, e.RbHash, tip.Point)
			}
		}
	}

	// Each vote's signature is checked once per node, however many peers
	// relay it: duplicates are dropped while their check is in flight.
	for i, n := range ns {
		ls := n.leios.Stats()
		if ls.VotesRelayed == 0 {
			continue
		}
		perVote := float64(ls.VotesVerified) / float64(ls.VotesRelayed)
		t.Logf("node %d: %d votes relayed, %d signature checks: %.2f verifications per vote (%d invalid)", i, ls.VotesRelayed, ls.VotesVerified, perVote, ls.VotesInvalid)
		if perVote > 1.1 {
			t.Errorf("node %d checked %.2f signatures per vote, want at most 1.1", i, perVote)
		}
	}
}

// certificateUpTo reports whether a block of n's chain up to number
// carries a certificate.
func certificateUpTo(t *testing.T, n *Node, number uint64) bool {
	t.Helper()
	for i := uint64(1); i <= number; i++ {
		blk, err := n.chain.BlockByNumber(i)
		must(t, err)
		if blk.Body.Certificate != nil {
			return true
		}
	}
	return false
}
