// Package vrf implements the verifiable random function
// ECVRF-EDWARDS25519-SHA512-ELL2 of RFC 9381 (suite string 0x04): the VRF
// that decides slot leadership (docs/protocol.md, "Linear Leios").
//
// A proof is Gamma (32 bytes) ‖ c (16 bytes) ‖ s (32 bytes) = 80 bytes; the
// output (beta, RFC 9381 proof_to_hash) is 64 bytes. Keys are derived from a
// 32-byte seed exactly as ed25519 keys are (RFC 8032 §5.1.5), so a
// cardano-cli VRF key file (seed ‖ public key) loads unchanged; note that
// Cardano's PraosVRF itself speaks draft-03 of the VRF, so proofs made here
// do not verify there and vice versa.
//
// Invariants:
//   - Prove is deterministic: the same key and input always give the same
//     proof and output (RFC 9381 §5.4.2.2 nonce generation, no randomness).
//   - Verify accepts exactly what RFC 9381 §5.3 accepts with validate_key
//     on: public keys and Gamma must be canonical RFC 8032 point encodings,
//     the public key must not be of small order, and s must be below the
//     group order. Every rejection wraps ErrInvalidProof.
//   - The output of a verified proof depends only on the key and the input
//     (full uniqueness): proof_to_hash multiplies Gamma by the cofactor.
//
// This package must never keep state between calls, read randomness other
// than in GenerateKey, or depend on anything but the standard library,
// filippo.io/edwards25519 and its field package.
package vrf
