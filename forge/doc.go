// Package forge owns block production: on every slot of the wall clock it
// runs the leader check with the pool's VRF key and, when the pool leads,
// forges a ranking block on the selected tip and hands it to the chain
// through the same AddBlock path a block from a peer takes.
//
// Invariants:
//   - At most one block per slot, and only on a tip whose slot is earlier.
//   - A forged block is not special: if chain selection does not adopt it,
//     it is simply not on the chain.
//
// This package never imports a store, neither the chain database nor the
// mempool: it reads the tip, adds blocks and takes txs through its own
// small interfaces (Ledger, Chain, Mempool), written in block and ledger
// types. It must never write to a store directly, and never forge for a
// slot that has already passed (a node that was stopped does not catch up
// by forging old slots).
package forge
