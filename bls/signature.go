package bls

import (
	"fmt"

	blst "github.com/supranational/blst/bindings/go"
)

// Domain separation tags of the minimal-signature-size proof-of-possession
// ciphersuite.
const (
	signatureDST  = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_"
	possessionDST = "BLS_POP_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_"
)

// Signature is a signature, or an aggregate of signatures on one message: a
// G1 point of the subgroup, not the identity.
type Signature struct{ p blst.P1Affine }

// PossessionProof proves that the holder of a public key knows its secret
// key: a signature over the compressed public key under its own DST, so it
// can never pass for a signature on a message.
type PossessionProof struct{ sig Signature }

// Sign signs msg.
func (sk *SecretKey) Sign(msg []byte) *Signature {
	sig := new(Signature)
	sig.p.Sign(sk.s, msg, []byte(signatureDST))
	return sig
}

// ProvePossession returns the key's proof of possession.
func (sk *SecretKey) ProvePossession() *PossessionProof {
	pk := sk.PublicKey().Bytes()
	proof := new(PossessionProof)
	proof.sig.p.Sign(sk.s, pk[:], []byte(possessionDST))
	return proof
}

// Verify reports whether sig is pk's signature on msg.
func (pk *PublicKey) Verify(msg []byte, sig *Signature) bool {
	// Both points were checked when decoded (or made here), so blst need not
	// check them again.
	return sig.p.Verify(false, &pk.p, false, msg, []byte(signatureDST))
}

// VerifyPossession reports whether proof proves possession of pk's secret
// key. Only keys that pass may ever be aggregated.
func (pk *PublicKey) VerifyPossession(proof *PossessionProof) bool {
	b := pk.Bytes()
	return proof.sig.p.Verify(false, &pk.p, false, b[:], []byte(possessionDST))
}

// SignatureFromBytes decodes a compressed G1 point, refusing encodings that
// are not canonical, points off the curve or outside the subgroup, and the
// identity.
func SignatureFromBytes(b []byte) (*Signature, error) {
	if len(b) != SignatureSize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidSignature, len(b), SignatureSize)
	}
	sig := new(Signature)
	if sig.p.Uncompress(b) == nil {
		return nil, fmt.Errorf("%w: not a compressed G1 point", ErrInvalidSignature)
	}
	if !sig.p.SigValidate(true) {
		return nil, fmt.Errorf("%w: the identity or not in the subgroup", ErrInvalidSignature)
	}
	return sig, nil
}

// Bytes returns the compressed point.
func (sig *Signature) Bytes() [SignatureSize]byte { return [SignatureSize]byte(sig.p.Compress()) }

// PossessionProofFromBytes decodes a proof of possession; its checks are
// SignatureFromBytes's.
func PossessionProofFromBytes(b []byte) (*PossessionProof, error) {
	sig, err := SignatureFromBytes(b)
	if err != nil {
		return nil, err
	}
	return &PossessionProof{sig: *sig}, nil
}

// Bytes returns the compressed point.
func (proof *PossessionProof) Bytes() [SignatureSize]byte { return proof.sig.Bytes() }
