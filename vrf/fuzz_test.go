package vrf

import (
	"errors"
	"testing"
)

// FuzzVerify feeds Verify arbitrary keys, inputs and proof bytes. It must
// never panic, must reject with ErrInvalidProof, and whatever it accepts
// must carry the output ProofToHash gives; for the RFC key and input, an
// accepted proof must give the RFC output (uniqueness of the VRF output).
func FuzzVerify(f *testing.F) {
	for _, tv := range rfc9381Vectors {
		f.Add(unhex(f, tv.pk), unhex(f, tv.alpha), unhex(f, tv.pi))
	}
	f.Add(make([]byte, PublicKeySize), []byte{}, make([]byte, ProofSize))
	f.Add(unhex(f, smallOrderEncodings[0]), []byte("x"), unhex(f, rfc9381Vectors[0].pi))
	f.Add([]byte{1, 2, 3}, []byte("short"), []byte{4, 5, 6})

	tv := rfc9381Vectors[0]
	var refPK PublicKey
	copy(refPK[:], unhex(f, tv.pk))
	refAlpha := string(unhex(f, tv.alpha))
	refBeta := string(unhex(f, tv.beta))

	f.Fuzz(func(t *testing.T, pkBytes, alpha, proofBytes []byte) {
		var pk PublicKey
		copy(pk[:], pkBytes)
		var proof [ProofSize]byte
		copy(proof[:], proofBytes)
		out, err := Verify(pk, alpha, proof)
		if err != nil {
			if !errors.Is(err, ErrInvalidProof) {
				t.Fatalf("Verify error %v does not wrap ErrInvalidProof", err)
			}
			return
		}
		hashed, err := ProofToHash(proof)
		if err != nil || hashed != out {
			t.Fatalf("accepted proof: ProofToHash = %x, %v; Verify output %x", hashed, err, out)
		}
		if pk == refPK && string(alpha) == refAlpha && string(out[:]) != refBeta {
			t.Fatalf("a second output %x verified for the RFC key and input", out)
		}
	})
}
