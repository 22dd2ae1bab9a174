package bls

import (
	"crypto/rand"
	"errors"
	"fmt"

	blst "github.com/supranational/blst/bindings/go"
)

// ErrEmptyAggregate is returned when asked to aggregate nothing.
var ErrEmptyAggregate = errors.New("bls: nothing to aggregate")

// batchMultiplierBits is the size of the random multiplier of each triple in
// VerifyBatch: a batch holding an invalid signature passes with probability
// at most 2^-64.
const batchMultiplierBits = 64

// AggregateSignatures adds signatures into one; the result verifies, on a
// message all of them signed, against the aggregate of their keys.
func AggregateSignatures(sigs []*Signature) (*Signature, error) {
	if len(sigs) == 0 {
		return nil, ErrEmptyAggregate
	}
	points := make([]*blst.P1Affine, len(sigs))
	for i, s := range sigs {
		points[i] = &s.p
	}
	var agg blst.P1Aggregate
	// Every point was checked when decoded or made: no group check here.
	if !agg.Aggregate(points, false) {
		return nil, fmt.Errorf("%w: aggregation failed", ErrInvalidSignature)
	}
	// A sum of subgroup points stays in the subgroup: only the identity
	// (blst's affine (0, 0)) is left to refuse.
	sig := &Signature{p: *agg.ToAffine()}
	if sig.p.Equals(new(blst.P1Affine)) {
		return nil, fmt.Errorf("%w: the aggregate is the identity", ErrInvalidSignature)
	}
	return sig, nil
}

// AggregatePublicKeys adds public keys into one. Sound only for keys whose
// proofs of possession were verified.
func AggregatePublicKeys(pks []*PublicKey) (*PublicKey, error) {
	if len(pks) == 0 {
		return nil, ErrEmptyAggregate
	}
	points := make([]*blst.P2Affine, len(pks))
	for i, pk := range pks {
		points[i] = &pk.p
	}
	var agg blst.P2Aggregate
	if !agg.Aggregate(points, false) {
		return nil, fmt.Errorf("%w: aggregation failed", ErrInvalidPublicKey)
	}
	pk := &PublicKey{p: *agg.ToAffine()}
	if pk.p.Equals(new(blst.P2Affine)) {
		return nil, fmt.Errorf("%w: the aggregate is the identity", ErrInvalidPublicKey)
	}
	return pk, nil
}

// VerifyAggregate reports whether sig is the aggregate of the signatures of
// every key in pks on the one message msg: the keys are added, then one
// pairing check is made. The keys' proofs of possession must have been
// verified; an empty pks never verifies.
func VerifyAggregate(pks []*PublicKey, msg []byte, sig *Signature) bool {
	pk, err := AggregatePublicKeys(pks)
	return err == nil && pk.Verify(msg, sig)
}

// SignedMessage is one (key, message, signature) triple of a batch.
type SignedMessage struct {
	Key       *PublicKey
	Message   []byte
	Signature *Signature
}

// VerifyBatch reports whether every triple of batch verifies, at a fraction
// of the cost of verifying them one by one: each triple is weighted by a
// fresh random 64-bit multiplier and the weighted sum is checked with one
// multi-pairing (blst spreads the work over GOMAXPROCS goroutines). False
// says only that some triple fails; verify them one by one to learn which.
// An empty batch verifies.
func VerifyBatch(batch []SignedMessage) bool {
	switch len(batch) {
	case 0:
		return true
	case 1:
		return batch[0].Key.Verify(batch[0].Message, batch[0].Signature)
	}
	sigs := make([]*blst.P1Affine, len(batch))
	pks := make([]*blst.P2Affine, len(batch))
	msgs := make([]blst.Message, len(batch))
	for i, t := range batch {
		sigs[i], pks[i], msgs[i] = &t.Signature.p, &t.Key.p, t.Message
	}
	return new(blst.P1Affine).MultipleAggregateVerify(sigs, false, pks, false, msgs,
		[]byte(signatureDST), randomMultiplier, batchMultiplierBits)
}

// randomMultiplier sets s to a random non-zero value of
// batchMultiplierBits bits: a zero multiplier would drop its triple from the
// check.
func randomMultiplier(s *blst.Scalar) {
	var b [SecretKeySize]byte // big-endian: the random bytes are the low ones
	low := b[SecretKeySize-batchMultiplierBits/8:]
	for isZero(low) {
		rand.Read(low) // never fails
	}
	s.FromBEndian(b[:])
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
