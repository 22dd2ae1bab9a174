package leiosnet

import (
	"fmt"
	"math/rand/v2"

	"github.com/leiosnode/leiosnode/block"
)

// TxSize is the size of a generated tx: a full 12 MB closure is the
// prototype's 13,888 txs.
const TxSize = 864

// EB is a forged endorser block: the RB header announcing it, its body and
// its closure (the txs, in body order).
type EB struct {
	Header  *block.Header
	Body    *block.EBBody
	Closure []block.HashedTx // each tx with the hash its body entry names
}

// Point is the EB's point: its RB's slot and its hash.
func (eb *EB) Point() block.Point { return block.Point{Slot: eb.Header.Slot, Hash: eb.Body.Hash()} }

// ClosureSize is the sum of its txs' sizes.
func (eb *EB) ClosureSize() uint64 { return eb.Body.ClosureSize() }

// GenerateTxs returns closureBytes/TxSize distinct txs of TxSize random
// bytes from rng (at least one).
func GenerateTxs(rng *rand.Rand, closureBytes int) [][]byte {
	n := max(1, closureBytes/TxSize)
	txs := make([][]byte, n)
	for i := range txs {
		tx := make([]byte, TxSize)
		for j := 0; j < TxSize; j += 8 {
			v := rng.Uint64()
			for k := range 8 {
				tx[j+k] = byte(v >> (8 * k))
			}
		}
		txs[i] = tx
	}
	return txs
}

// Forge builds an EB of txs, in that order, announced by a valid header at
// the network's next slot. It is not published yet (Publish, Diffuse).
func (n *Network) Forge(txs [][]byte) (*EB, error) {
	closure := block.HashTxs(txs)
	entries := make([]block.EBTx, len(closure))
	for i, tx := range closure {
		entries[i] = block.EBTx{TxHash: tx.Hash, Size: uint32(len(tx.Bytes))}
	}
	body, err := block.NewEBBody(entries, n.limits)
	if err != nil {
		return nil, fmt.Errorf("leiosnet: forge: %w", err)
	}
	n.mu.Lock()
	n.slot++
	slot := n.slot
	n.mu.Unlock()
	ann := body.Announcement()
	return &EB{Header: n.pool.Header(n.validator, block.HeaderBody{
		BlockNumber:  slot,
		Slot:         slot,
		Announcement: &ann,
	}), Body: body, Closure: closure}, nil
}
