// Package forge owns block production and this pool's votes. On every slot
// of the wall clock it runs the leader check with the pool's VRF key and,
// when the pool leads, forges a ranking block on the selected tip — a
// CertRB when the tip's EB has a quorum of votes and is old enough, else an
// RB with txs, either announcing an EB of the txs it does not carry — and
// hands it to the chain through the same AddBlock path a block from a peer
// takes. If the pool holds a committee seat, a voter on a loop of its own
// (woken at every slot, tip change and completed closure) votes on the
// tip's EB once its closure is held and applies (VoteSlot). Headers, EB
// bodies, certificates and votes are built in the genesis's encoding
// (leios.encoding).
//
// Invariants:
//   - At most one block per slot, and only on a tip whose slot is earlier.
//   - A forged block is not special: if chain selection does not adopt it,
//     it is simply not on the chain.
//   - At most one vote per RB, and only for the EB of the selected tip,
//     inside its voting window, after its closure applied on the ledger
//     after that RB, never for an equivocating announcement.
//
// This package never imports a store, neither the chain database nor the
// mempool nor the Leios pipeline: it reads the tip, adds blocks, takes txs
// and closures and relays votes through its own small interfaces (Ledger,
// Chain, Mempool, Leios), written in block and ledger types. It must never
// write to a store directly, and never forge for a slot that has already
// passed (a node that was stopped does not catch up by forging old slots).
package forge
