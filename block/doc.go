// Package block owns the wire types of the chain and of Leios: ranking-block
// headers and bodies, endorser-block (EB) bodies, points, votes and
// certificates, with their CBOR codecs and hashes (docs/protocol.md, "Wire formats"),
// and the two encodings a network's genesis may choose for the Leios ones
// (Encoding): CIP-0164's and the Haskell prototype's, with the message each
// has a vote sign.
//
// Invariants:
//   - Everything that is hashed or signed keeps the bytes it was decoded from;
//     Hash and signature checks use those bytes, never a re-encoding.
//   - Values built locally (New*) are encoded once, at construction, and carry
//     those bytes from then on, so a local value and a decoded one behave alike.
//   - Decoders reject what the wire format forbids (wrong lengths, trailing
//     bytes, indefinite lengths where the format says definite) with an error
//     wrapping ErrMalformed.
//   - Headers and certificates decode in either encoding and record which;
//     an EB body decodes in its limits' encoding only. Each value has one
//     encoding in each (a CIP header's certified_eb is omitted when false),
//     so one value never has two hashes on a network.
//
// This package must never import a store, a protocol, or the ledger: it is the
// floor every other package stands on.
package block
