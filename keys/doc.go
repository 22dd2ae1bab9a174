// Package keys generates, reads and writes the node's key files, and derives
// from the keys the addresses genesis funds are paid to and the libp2p peer
// ID of a node.
//
// Key files are Cardano text envelopes, {"type", "description", "cborHex"},
// with cborHex the CBOR byte string of the raw key, exactly as cardano-cli
// writes them: an ed25519 signing key holds its 32-byte seed, a verification
// key its 32 bytes, a VRF signing key seed ‖ public key (64 bytes) and a VRF
// verification key its 32 bytes. Keys made by cardano-cli therefore load
// here and the other way round.
//
// Invariants:
//   - A key is returned only if the file's type is the one asked for, its
//     payload is a canonical CBOR byte string of the right length, and, for
//     a VRF signing key, the public half matches the seed.
//   - Secret key files are created with mode 0600, public ones with 0644,
//     and written atomically (a reader never sees half a key).
//
// This package must never log or print a secret key, and never read
// randomness except when asked to generate a key.
package keys
