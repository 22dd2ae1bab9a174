package ledger

import "golang.org/x/sync/errgroup"

// decodedTx is a tx of a batch as the work ahead of the apply leaves it.
type decodedTx struct {
	tx        *Tx
	err       error // decoding failed
	witnesses witnessCheck
}

// aheadChunk is how many consecutive txs one goroutine of the work ahead
// takes: enough to pay for the goroutine, few enough that the last chunks
// of a batch spread over the cores.
const aheadChunk = 64

// decodeAhead decodes txs and verifies the witness signatures of those
// verified does not vouch for, on up to workers goroutines (one: in this
// goroutine). The signatures over a tx id depend on no ledger state, so
// this pass needs none; whether the witnesses are the right keys does, and
// is left to applyInto. It checks every tx, as applying them may stop at
// any of them.
func decodeAhead(txs [][]byte, verified func(*Tx) bool, workers int) []decodedTx {
	out := make([]decodedTx, len(txs))
	inChunks(len(txs), workers, func(i int) {
		d := &out[i]
		if d.tx, d.err = DecodeTx(txs[i]); d.err == nil && verified(d.tx) {
			d.witnesses.skip = true
		}
	})
	verifyAhead(out, workers)
	return out
}

// verifyAhead verifies the witness signatures of the decoded txs whose
// witnesses are not to be skipped, on up to workers goroutines, a key
// that signs several of them expanded once for all (sharedKeys).
func verifyAhead(txs []decodedTx, workers int) {
	keys := sharedKeys(func(yield func(*Tx) bool) {
		for i := range txs {
			if d := &txs[i]; d.err == nil && !d.witnesses.skip && !yield(d.tx) {
				return
			}
		}
	})
	inChunks(len(txs), workers, func(i int) {
		if d := &txs[i]; d.err == nil && !d.witnesses.skip {
			d.witnesses = witnessCheck{verified: true, sigErr: keys.verify(d.tx)}
		}
	})
}

// inChunks calls do for every index below n, chunks of aheadChunk
// consecutive indexes on up to workers goroutines. Each call must write
// only what belongs to its own index.
func inChunks(n, workers int, do func(i int)) {
	if workers <= 1 || n <= 1 {
		for i := range n {
			do(i)
		}
		return
	}
	var g errgroup.Group
	g.SetLimit(workers)
	for lo := 0; lo < n; lo += aheadChunk {
		hi := min(lo+aheadChunk, n)
		g.Go(func() error {
			for i := lo; i < hi; i++ {
				do(i)
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines return no error: each tx's is in its slot
}
