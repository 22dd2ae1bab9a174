package load

import (
	"bytes"
	"slices"
	"testing"

	"github.com/leiosnode/leiosnode/ledger"
)

// chainsOfTxs are three chains that admitted five txs each, keeping the
// first four of each for the floor.
func chainsOfTxs(t *testing.T, params ledger.Params, funds testFunds) []*txChain {
	chains := funds.chains(1)
	for _, c := range chains {
		c.floorCap = 4
		for range 5 {
			if _, err := c.next(params); err != nil {
				t.Fatal(err)
			}
			c.admit()
		}
	}
	return chains
}

// TestFloorSample: the sample is each chain's first admitted txs, chain
// after chain; a tx sent again after its node dropped it is not sampled
// twice.
func TestFloorSample(t *testing.T) {
	params := ledger.DefaultParams()
	chains := chainsOfTxs(t, params, newTestFunds(t, 3, 1_000_000_000))
	f := &Firehose{chains: chains}
	sample := f.FloorSample()
	if len(sample) != 12 {
		t.Fatalf("%d txs sampled, want 4 of each of 3 chains", len(sample))
	}
	for j, c := range chains {
		for i := range 4 {
			if !bytes.Equal(sample[4*j+i], c.admitted[i].tx.Bytes()) {
				t.Fatalf("sample %d is not chain %d's tx %d", 4*j+i, j, i)
			}
		}
	}
	// Chain 0's node dropped its txs from the third on; they are admitted
	// again.
	before := slices.Clone(chains[0].floorTxs)
	chains[0].rewind(1)
	for len(chains[0].resubmit) > 0 {
		chains[0].readmit()
	}
	if !slices.EqualFunc(chains[0].floorTxs, before, bytes.Equal) {
		t.Errorf("after the txs went again the sample holds %d txs, want the same 4", len(chains[0].floorTxs))
	}
}
