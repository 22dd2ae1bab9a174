// Package consensus owns the protocol parameters of a network (the genesis
// file), the slot clock, the Praos leader check, the validation of a
// ranking-block header against them (encoding, issuer, VRF proof, leader
// eligibility, signature, and slot), and the Leios voting committee: its
// seats, and the checks of votes and certificates against them, on the
// vote message of the genesis's encoding (leios.encoding: the CIP's or the
// prototype's, block.Encoding).
//
// Every node must reach the same verdict on the same header, vote or
// certificate, so nothing here depends on local state other than the wall
// clock used to refuse headers from the future, and the leader check, the
// committee's selection and its quorum use exact arithmetic. A genesis is
// accepted only if every pool's BLS key comes with a proof of possession
// that verifies, since certificates aggregate the keys.
//
// This package must never import a store or a protocol.
package consensus
