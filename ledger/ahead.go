package ledger

import "golang.org/x/sync/errgroup"

// decodedTx is a tx of a batch as verifyAhead leaves it for the apply.
type decodedTx struct {
	tx        *Tx
	err       error // decoding failed
	witnesses witnessCheck
}

// aheadChunk is how many consecutive txs one goroutine of verifyAhead
// takes: enough to pay for the goroutine, few enough that the last
// chunks of a batch spread over the cores.
const aheadChunk = 64

// verifyAhead decodes txs and verifies the witness signatures of those
// verified does not vouch for, on up to workers goroutines. The signatures
// over a tx id depend on no ledger state, so this pass needs none; whether
// the witnesses are the right keys does, and is left to applyInto. It
// checks every tx, as applying them may stop at any of them.
func verifyAhead(txs [][]byte, verified func(*Tx) bool, workers int) []decodedTx {
	out := make([]decodedTx, len(txs))
	var g errgroup.Group
	g.SetLimit(workers)
	for lo := 0; lo < len(txs); lo += aheadChunk {
		hi := min(lo+aheadChunk, len(txs))
		g.Go(func() error {
			// Each goroutine writes only its own indexes of out.
			for i := lo; i < hi; i++ {
				d := &out[i]
				if d.tx, d.err = DecodeTx(txs[i]); d.err != nil {
					continue
				}
				if verified(d.tx) {
					d.witnesses.skip = true
				} else {
					d.witnesses = witnessCheck{verified: true, sigErr: verifySignatures(d.tx)}
				}
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines return no error: each tx's is in out
	return out
}
