package devnet

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
)

// settleTimeout bounds the final check's queries as a whole.
const settleTimeout = 30 * time.Second

// inFlightGrace is how long the devnet waits, after the firehose stopped,
// for its last txs to reach every node's chain: two slots and the expected
// time of five blocks (slot length / f each).
func inFlightGrace(g *consensus.Genesis) time.Duration {
	slot := g.SlotLength()
	blocks := 5 * 10 * slot // f = 0.1 when the genesis's own cannot be read
	if f, err := g.ActiveSlots(); err == nil && f.Sign() > 0 {
		perBlock, _ := new(big.Rat).Inv(f).Float64() // slots per block, 1/f
		blocks = time.Duration(5 * perBlock * float64(slot))
	}
	return 2*slot + blocks
}

// awaitInFlight polls the nodes until every one reports an empty mempool
// and the same number of txs on chain, and says whether they did before
// grace had passed (or ctx ended).
func awaitInFlight(ctx context.Context, client *http.Client, nodes []Node, grace time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	for {
		if txsSettled(pollStatuses(ctx, client, nodes)) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// txsSettled: every node answered, with an empty mempool and the same
// number of txs on chain.
func txsSettled(polls []nodePoll) bool {
	for _, p := range polls {
		if p.Status == nil || p.Status.Mempool.Txs != 0 || p.Status.TxsOnChain != polls[0].Status.TxsOnChain {
			return false
		}
	}
	return true
}

// settle is the final check, made once the firehose has stopped and while
// the nodes still run: where every admitted tx ended up.
//
// A chain's txs each spend the one before, so on a node exactly one output
// of the chain is unspent at the tip: the newest admitted tx whose output
// is unspent there is the chain's last tx on that node's chain, and every
// tx before it is on that chain too. A tx on the chain of every node that
// answered is on chain; else it is in some node's mempool, or on the chain
// of some nodes only, or lost.
func (f *txFirehose) settle(ctx context.Context) *TxReport {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	// A last POST without an answer may have been admitted.
	for _, c := range f.chains {
		_, _ = f.resolvePending(ctx, f.apis[c.node], c) // a query error leaves it pending, so not counted
	}

	// The nodes keep forging while they are asked, so txs move from the
	// mempools onto the chains meanwhile. The mempools are asked between two
	// walks of the chains: a tx that left every mempool before it was asked
	// for is on some chain by the second walk.
	first, _ := f.allOnChainLengths(ctx)
	inMempool, mempoolErr := f.mempoolMembership(ctx, first)
	lengths, nodeProblems := f.allOnChainLengths(ctx)

	r := f.newTxReport()
	for _, ps := range nodeProblems {
		r.Problems = append(r.Problems, ps...)
	}
	if mempoolErr != nil {
		r.Problems = append(r.Problems, "the final check's mempool queries failed: "+mempoolErr.Error())
	}
	for j, c := range f.chains {
		if c.stopped != "" {
			r.StoppedChains = append(r.StoppedChains, fmt.Sprintf("%s (to %s) stopped: %s", c.name, f.nodeName(c.node), c.stopped))
		}
		shortest, longest, answered := chainSpan(lengths, j)
		for k, tx := range c.admitted {
			in, asked := inMempool[tx.Hash]
			switch {
			case !answered:
				r.Unchecked++
			case k < shortest:
				r.OnChain++
			case in:
				r.InMempoolAtEnd++
			case k < longest:
				r.OnSomeChains++
			case !asked && mempoolErr != nil:
				r.Unchecked++
			default:
				r.Lost++
			}
		}
	}
	return r
}

// chainSpan is the least and the greatest number of chain j's txs on the
// chains of the nodes that answered.
func chainSpan(lengths [][]int, j int) (shortest, longest int, answered bool) {
	shortest = -1
	for _, l := range lengths {
		if l == nil {
			continue
		}
		if !answered || l[j] < shortest {
			shortest = l[j]
		}
		longest, answered = max(longest, l[j]), true
	}
	return shortest, longest, answered
}

// allOnChainLengths is onChainLengths for every node, at once:
// lengths[n][j] is how many of chain j's admitted txs are on node n's
// chain, nil for a node that did not answer.
func (f *txFirehose) allOnChainLengths(ctx context.Context) ([][]int, [][]string) {
	lengths := make([][]int, len(f.nodes))
	problems := make([][]string, len(f.nodes))
	var queries sync.WaitGroup
	for n := range f.nodes {
		queries.Go(func() { lengths[n], problems[n] = f.onChainLengths(ctx, n) })
	}
	queries.Wait()
	return lengths, problems
}

// mempoolMembership asks the nodes that answered about every admitted tx
// not on all of their chains: whether some mempool holds it.
func (f *txFirehose) mempoolMembership(ctx context.Context, lengths [][]int) (map[[32]byte]bool, error) {
	in := map[[32]byte]bool{}
	for j, c := range f.chains {
		shortest, _, answered := chainSpan(lengths, j)
		if !answered {
			continue
		}
		for k := max(shortest, 0); k < len(c.admitted); k++ {
			held, err := f.inSomeMempool(ctx, lengths, c.admitted[k].Hash)
			if err != nil {
				return in, err
			}
			in[c.admitted[k].Hash] = held
		}
	}
	return in, nil
}

// newTxReport is the report's counts of the submissions.
func (f *txFirehose) newTxReport() *TxReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := &TxReport{
		Rate:         f.opts.Rate,
		Chains:       len(f.chains),
		Submitted:    f.stats.Submitted,
		Admitted:     f.stats.Admitted,
		Rejected:     map[string]uint64{},
		MempoolFull:  f.stats.MempoolFull,
		SubmitErrors: f.stats.SubmitErrors,
	}
	for reason, count := range f.stats.Rejected {
		r.Rejected[reason] = count
	}
	return r
}

// onChainLengths finds, for every chain, how many of its admitted txs are
// on node n's chain. A node that does not answer gets nil, and the reason
// among the problems.
func (f *txFirehose) onChainLengths(ctx context.Context, n int) ([]int, []string) {
	lengths := make([]int, len(f.chains))
	var problems []string
	for j, c := range f.chains {
		// A block adopted during the walk can move the unspent output past
		// it; walking again finds it.
		found := false
		for attempt := 0; attempt < 3 && !found; attempt++ {
			var err error
			if lengths[j], found, err = f.onChainLength(ctx, n, c); err != nil {
				return nil, []string{fmt.Sprintf("%s did not answer the final check: %v", f.nodeName(n), err)}
			}
		}
		if !found {
			// Spent by a tx the firehose does not know of.
			problems = append(problems, fmt.Sprintf("no output of %s's chain is unspent at %s", c.name, f.nodeName(n)))
		}
	}
	return lengths, problems
}

// onChainLength is how many of c's admitted txs are on node n's chain: the
// newest one whose output is unspent there and all before it, or none when
// the genesis output is the unspent one. found is false when no output of
// the chain is unspent.
func (f *txFirehose) onChainLength(ctx context.Context, n int, c *txChain) (length int, found bool, err error) {
	api := f.apis[n]
	// Newest first: the txs still in a mempool are the last ones.
	for k := len(c.admitted); k > 0; k-- {
		if _, unspent, err := api.utxo(ctx, c.admitted[k-1].output()); err != nil || unspent {
			return k, unspent, err
		}
	}
	_, unspent, err := api.utxo(ctx, c.genesis)
	return 0, unspent, err
}

// inSomeMempool asks the nodes that answered the final check whether the tx
// with this hash is in their mempool.
func (f *txFirehose) inSomeMempool(ctx context.Context, lengths [][]int, hash [32]byte) (bool, error) {
	for n, l := range lengths {
		if l == nil {
			continue
		}
		in, err := f.apis[n].inMempool(ctx, hash)
		if err != nil {
			return false, fmt.Errorf("%s: %w", f.nodeName(n), err)
		}
		if in {
			return true, nil
		}
	}
	return false, nil
}
