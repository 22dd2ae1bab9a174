// Package consensus owns the protocol parameters of a network (the genesis
// file), the slot clock, the Praos leader check, and the validation of a
// ranking-block header against them: issuer, VRF proof, leader eligibility,
// signature, and slot.
//
// Every node must reach the same verdict on the same header, so nothing
// here depends on local state other than the wall clock used to refuse
// headers from the future, and the leader check uses exact arithmetic.
//
// This package must never import a store or a protocol.
package consensus
