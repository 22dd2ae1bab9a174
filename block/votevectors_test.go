package block_test

import (
	"bytes"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// The vote messages of both encodings are the bytes of
// testdata/vote-messages.golden, and its signatures are the fixed key's
// over them: each verifies over its own message with the bls package, and
// not over the other's.
func TestVoteMessageVectors(t *testing.T) {
	v := protocoltest.Golden(t, "testdata/vote-messages.golden")
	sk, err := bls.KeyFromSeed(v["seed"])
	if err != nil {
		t.Fatal(err)
	}
	if got := sk.Bytes(); !bytes.Equal(got[:], v["secret key"]) {
		t.Fatalf("secret key %x", got)
	}
	pk, err := bls.PublicKeyFromBytes(v["public key"])
	if err != nil {
		t.Fatal(err)
	}
	if !sk.PublicKey().Equal(pk) {
		t.Fatal("the seed's public key is not the vector's")
	}
	var eb, rb block.Hash
	copy(eb[:], bytes.Repeat([]byte{0x77}, 32))
	copy(rb[:], bytes.Repeat([]byte{0x88}, 32))
	s := block.VoteSubject{RbHash: rb, Slot: 1_234_567, EbHash: eb}
	messages := map[block.Encoding]string{block.EncodingCIP: "cip", block.EncodingPrototype: "prototype"}
	for enc, name := range messages {
		msg := enc.VoteMessage(s)
		if !bytes.Equal(msg, v[name+" vote message"]) {
			t.Fatalf("%s vote message %x, want %x", name, msg, v[name+" vote message"])
		}
		sig, err := bls.SignatureFromBytes(v[name+" vote signature"])
		if err != nil {
			t.Fatal(err)
		}
		if !pk.Verify(msg, sig) {
			t.Fatalf("%s: the vector's signature does not verify over its message", name)
		}
		if got := sk.Sign(msg).Bytes(); !bytes.Equal(got[:], v[name+" vote signature"]) {
			t.Fatalf("%s: signing gives %x", name, got)
		}
		for other, otherName := range messages {
			if other != enc && pk.Verify(other.VoteMessage(s), sig) {
				t.Fatalf("the %s signature verifies over the %s message", name, otherName)
			}
		}
	}
}
