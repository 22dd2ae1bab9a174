package node

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/keys"
)

// Three pools, one of which equivocates (the devnet's chaos): every EB it
// announces with a twin header is seen as an equivocation by the others,
// who never vote for it, so no block certifies it — while the honest
// pools' EBs are certified on the same network.
func TestEquivocatingPoolIsNeverCertified(t *testing.T) {
	configs := testNet(t, 3, 100*time.Millisecond, func(g *consensus.Genesis) {
		g.ActiveSlotsCoeff = "0.2"
		g.Leios.RBMaxBodyBytes = 700              // three of the test's txs
		g.Leios.LVote, g.Leios.MinCertGap = 8, 14 // as the ten-node test
		g.SystemStart = time.Now().Add(time.Second).UTC()
	})
	issuer, err := keys.ReadSigningKey(configs[0].IssuerKeyFile, keys.StakePool)
	must(t, err)
	liar := block.Bytes32(issuer.Public().(ed25519.PublicKey))

	nodes, _ := runNodes(t, configs, func(i int, o *Options) { o.Equivocate = i == 0 })

	// Txs beyond what RBs carry, to every node, paced by node 1's chain,
	// until node 1 saw the liar equivocate twice and certified an EB of an
	// honest pool.
	waitHTTP(t, configs[1].HTTPAddr)
	txs := payments(t, 3000)
	deadline := time.Now().Add(waittest.Hang)
	for sent := 0; ; {
		ls := nodes[1].leios.Stats()
		if ls.Equivocations >= 2 && nodes[1].chain.CertRBsOnChain() >= 1 {
			break
		}
		if time.Now().After(deadline) || sent+30 > len(txs) {
			t.Fatalf("after %d txs: node 1 saw %d equivocations and %d CertRBs", sent, ls.Equivocations, nodes[1].chain.CertRBsOnChain())
		}
		changed := nodes[1].chain.TipChanged()
		if nodes[1].mempool.Snapshot().Len() < 10 {
			for _, tx := range txs[sent : sent+30] {
				submitAsWallet(t, configs[1].HTTPAddr, tx.Bytes())
				sent++
			}
		}
		select {
		case <-changed:
		case <-time.After(time.Second):
		}
	}

	// On node 1's chain no CertRB certifies an EB the liar announced in a
	// slot it equivocated in; every node saw the equivocations.
	var parent *block.Header
	certified := 0
	for n := uint64(1); n <= nodes[1].chain.Tip().BlockNumber; n++ {
		blk, err := nodes[1].chain.BlockByNumber(n)
		must(t, err)
		if pt, ok := consensus.CertifiedPoint(blk, parent); ok {
			certified++
			if parent.IssuerVKey == liar && nodes[1].leios.Equivocated(parent.Slot, liar) {
				t.Errorf("block %d certifies EB %s, which the equivocating pool announced twice in slot %d", n, pt, parent.Slot)
			}
		}
		parent = blk.Header
	}
	// The cause: no honest node votes on an EB of a slot the liar
	// equivocated in.
	refused := 0
	for i, n := range nodes[1:] {
		if e := n.leios.Stats().Equivocations; e == 0 {
			t.Errorf("node %d saw no equivocation", i+1)
		}
		for _, e := range n.leios.EBTimes() {
			if !n.leios.Equivocated(e.Slot, liar) {
				continue
			}
			if e.Vote == forge.VoteCast {
				t.Errorf("node %d voted for the equivocated EB %s of slot %d", i+1, e.EbHash[:8], e.Slot)
			}
			if e.Vote == forge.VoteEquivocation {
				refused++
			}
		}
	}
	if refused == 0 {
		t.Error("no node recorded refusing a vote for an equivocation")
	}
	t.Logf("node 1: %d equivocations seen, %d EBs certified, none of the equivocating pool's; %d votes refused for equivocations", nodes[1].leios.Stats().Equivocations, certified, refused)
}
