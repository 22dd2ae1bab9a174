package txcache

import (
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/benchkeys"
)

// txBytes is the size of every benchmark tx. The stores never parse txs, and
// small ones keep the LeiosDB population quick; the probes read only the
// membership index, whose size does not depend on it.
const txBytes = 64

// hitRatios are the benchmark's hit ratios, in percent; position i of a batch is
// a hit when i mod 5 < pct/20 (benchkeys.IsHit).
var hitRatios = []int{0, 20, 40, 60, 80, 100}

// workload is the data of one run: ebs EBs of txsPerEB txs each, pairwise
// disjoint. Tx i of EB eb is the 64 bytes of two copies of the splitmix64
// key benchkeys.TxKey(eb, i); its hash — the key of all three structures,
// since the LeiosDB knows a tx only by the Blake2b-256 of its bytes — is
// block.HashBytes of those bytes. Miss i is built the same way from
// benchkeys.MissKey(i), so it is a hash of no stored tx.
type workload struct {
	ebs, txsPerEB int
	bodies        [][]block.EBTx // per EB, in order
	hashes        [][]block.Hash // per EB, bodies[eb][i].TxHash
	batches       [][]block.Hash // per hit ratio: one EB-sized lookup batch
	hits          []int          // per hit ratio: the hits of its batch
}

func newWorkload(ebs, txsPerEB int) *workload {
	w := &workload{
		ebs:      ebs,
		txsPerEB: txsPerEB,
		bodies:   make([][]block.EBTx, ebs),
		hashes:   make([][]block.Hash, ebs),
	}
	for eb := range ebs {
		w.bodies[eb] = make([]block.EBTx, txsPerEB)
		w.hashes[eb] = make([]block.Hash, txsPerEB)
		for i := range txsPerEB {
			h := block.HashBytes(txOf(eb, i))
			w.bodies[eb][i] = block.EBTx{TxHash: h, Size: txBytes}
			w.hashes[eb][i] = h
		}
	}
	// Hits are txs of the newest EB, as in benchkeys.LookupBatch.
	newest := w.hashes[ebs-1]
	for _, pct := range hitRatios {
		batch := make([]block.Hash, txsPerEB)
		hits := 0
		for i := range batch {
			if benchkeys.IsHit(i, pct) {
				batch[i] = newest[i]
				hits++
			} else {
				batch[i] = block.HashBytes(missOf(i))
			}
		}
		w.batches = append(w.batches, batch)
		w.hits = append(w.hits, hits)
	}
	return w
}

// total is the number of distinct txs.
func (w *workload) total() int { return w.ebs * w.txsPerEB }

// txOf is the bytes of tx i of EB eb.
func txOf(eb, i int) []byte { return doubled(benchkeys.TxKey(eb, i)) }

// missOf is the bytes of a tx no EB names.
func missOf(i int) []byte { return doubled(benchkeys.MissKey(i)) }

func doubled(k block.Hash) []byte {
	tx := make([]byte, 0, txBytes)
	return append(append(tx, k[:]...), k[:]...)
}
