// Package keys generates, reads and writes the node's key files, and derives
// from the keys the addresses genesis funds are paid to (written to
// address files in bech32, read from them in bech32 or hex) and the libp2p
// peer ID of a node.
//
// Key files are Cardano text envelopes, {"type", "description", "cborHex"},
// with cborHex the CBOR byte string of the raw key, exactly as cardano-cli
// writes them, under cardano-cli's types and descriptions: an ed25519
// signing key holds its 32-byte seed, a verification key its 32 bytes, a
// VRF signing key seed ‖ public key (64 bytes) and a VRF verification key
// its 32 bytes. Keys made by cardano-cli (address key-gen, node key-gen,
// node key-gen-VRF) or cardano-serialization-lib therefore load here and
// the other way round. Payment key files this node wrote before it used
// cardano-cli's types (PaymentSigningKey_ed25519,
// PaymentVerificationKey_ed25519) are still read, never written. The node
// key, which only gives a node its libp2p identity, has types of its own.
// There are no KES keys: blocks are signed with the cold key. A BLS voting
// signing key holds its
// big-endian scalar (32 bytes) and a BLS verification key its compressed G2
// point (96 bytes), under the envelope types the Haskell Leios prototype
// uses, so its key files load here too.
//
// Invariants:
//   - A key is returned only if the file's type is the one asked for, its
//     payload is a canonical CBOR byte string of the right length, and, for
//     a VRF signing key, the public half matches the seed; a BLS key must
//     also decode (a scalar in [1, r), a subgroup point not the identity).
//   - Secret key files are created with mode 0600, public ones with 0644,
//     and written atomically (a reader never sees half a key).
//   - CheckPrivate refuses a signing key file its group or others may read
//     (on unix); the node checks every signing key it runs with by it.
//     Reading a key does not, so tools that only derive from a key (a peer
//     ID, a payment) still read one an operator left readable.
//
// This package must never log or print a secret key, and never read
// randomness except when asked to generate a key.
package keys
