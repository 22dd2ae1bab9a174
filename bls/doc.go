// Package bls owns the BLS12-381 signatures of Leios votes and certificates:
// the minimal-signature-size variant (signatures in G1, 48 bytes compressed;
// public keys in G2, 96 bytes compressed) of the proof-of-possession
// ciphersuite of the IETF BLS signature draft. Signatures use the DST
// BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_; a proof of possession is a
// signature over the compressed public key with the DST
// BLS_POP_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_. Every curve and pairing
// operation is blst's (github.com/supranational/blst).
//
// Invariants:
//   - A PublicKey, Signature or PossessionProof obtained from this package is
//     a point of the prime-order subgroup and never the identity: the
//     decoders refuse anything else, so the checks need not be repeated on
//     every verification.
//   - A SecretKey is a non-zero scalar below the group order.
//   - Aggregating public keys is sound only for keys whose proof of
//     possession was verified (rogue-key attacks); that is the caller's
//     duty, done once when the keys are registered.
//   - Signing is deterministic; only GenerateKey and the batch verifier's
//     random multipliers read randomness (crypto/rand).
//
// This package never keeps state between calls, never writes or logs a
// secret key, and knows nothing of votes, seats or stake.
package bls
