package bls

import (
	"encoding/hex"
	"math/big"
	"testing"
)

// prototypeKeys are the BLS keys of the three pools of the Haskell Leios
// prototype's devnet: the signing key (a big-endian scalar), the
// verification key and the proof of possession its genesis registers.
var prototypeKeys = []struct{ secret, public, proof string }{
	{
		"2bfb84caf92825a9f089d1352b14f19a4bb3a7b00f6d1fb9da445b40b6d74ba6",
		"99786f625a1c9973d15990047f23120c0c1f9fa801b31ce241440935d224a79f39be5ce7fa9158964b99d66d8d2376cc0825294de6eca720541716ca8794e5498e916c97a50bcab26708a4024a640e64718b6098b159498288b72512555ba38c",
		"98f08ec21b63e8f7cbf042dd4df9c1527f1d14cc973cc2fd7367289ca552cef37a099b05bd7d3dc056df193a816e4229",
	},
	{
		"2ebde79f560c5a86c926837ec38abeb924f36fe7efc1b5f00c8549c627495dad",
		"948a726e70c21af0535f0c5b58b7b1bac46e94300d348b8c65abf4ed86998714192674ef612d52de5647c5eb4bc3a5db0f44f1f02a61628805000f0719428578c36569318dd8a03c2ca3d41e318f6bcd8c0b8cb6e3c6fae99f389a0b465a9921",
		"b5ec54340ad8d7d168e03cf6cfc9d0f90fc92bfa2de52f82fea9565c1c3c1895f6aaf7b6b226c33072f8cf6bc2d73df0",
	},
	{
		"71b3ebe5699365359ddafcc0f65f8c63281ddd44273cde28787c86d2efdb5519",
		"ae23eff571532a2e0542b2f7a4e8ae59c1dc40aafdec0ce3a3e2d36d0240e1bbb02d417f56388cd44bd553679e6c6dc40173b5c7dcb94ba6f08a1ba20796d0c243ea2a5e913a8dd0dfce27822405b2daa53c60557645d9320908690e888eefcf",
		"ad0e32e6e2e0ef3744e19738493771dbf1076061b4dc46ba7fef6c9ed2d91a0b1d790845306e741aa24296a3c9da818d",
	},
}

// TestPrototypeKeys checks key encoding, key derivation and signing against
// another implementation: each secret key gives the prototype's public key,
// and signing the public key's bytes gives the prototype's proof byte for
// byte.
//
// That is because the prototype's proofs of possession are signatures over
// the public key with the signature DST (BLS_SIG_…), where the ciphersuite
// prescribes the PoP DST (BLS_POP_…). This package follows the ciphersuite,
// so the prototype's proofs do not verify here; the test pins the
// divergence so it is not forgotten.
func TestPrototypeKeys(t *testing.T) {
	for i, v := range prototypeKeys {
		sk, err := SecretKeyFromBytes(unhex(t, v.secret))
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		pk := sk.PublicKey()
		pkb := pk.Bytes()
		if hex.EncodeToString(pkb[:]) != v.public {
			t.Errorf("key %d: public key %x, want %s", i, pkb, v.public)
		}
		if sig := sk.Sign(pkb[:]).Bytes(); hex.EncodeToString(sig[:]) != v.proof {
			t.Errorf("key %d: signature over the public key %x, want the prototype's proof %s", i, sig, v.proof)
		}
		proof, err := PossessionProofFromBytes(unhex(t, v.proof))
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if pk.VerifyPossession(proof) {
			t.Errorf("key %d: the prototype's proof verifies under the PoP DST; revisit the note above", i)
		}
	}
}

// TestKeyGenVectors: KeyFromSeed is the draft's KeyGen with empty key_info,
// which EIP-2333 calls derive_master_SK; these are its test cases 0 and 1.
func TestKeyGenVectors(t *testing.T) {
	for _, v := range []struct{ seed, master string }{
		{"c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2cf141630c7a3c4ab7c81b2f001698e7463b04",
			"6083874454709270928345386274498605044986640685124978867557563392430687146096"},
		{"3141592653589793238462643383279502884197169399375105820974944592",
			"29757020647961307431480504535336562678282505419141012933316116377660817309383"},
	} {
		sk, err := KeyFromSeed(unhex(t, v.seed))
		if err != nil {
			t.Fatal(err)
		}
		b := sk.Bytes()
		if got := new(big.Int).SetBytes(b[:]).String(); got != v.master {
			t.Errorf("KeyFromSeed(%s…) = %s, want %s", v.seed[:8], got, v.master)
		}
	}
}

// TestGolden pins what this package makes from a fixed seed: no other
// implementation was found to check the PoP DST against, so these bytes
// guard against an unnoticed change of DST, encoding or derivation.
func TestGolden(t *testing.T) {
	sk := testKey(t, 1)
	skb, pk := sk.Bytes(), sk.PublicKey().Bytes()
	sig, proof := sk.Sign([]byte("leiosnode")).Bytes(), sk.ProvePossession().Bytes()
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"secret key", skb[:], "144b27828e305a2d67fc7f4eea6de706b405cdd1ab8ad2daec046ccdeeec8b79"},
		{"public key", pk[:], "92c5ed2c7ec2b477af30b4a940ff81e367beca0e1cf98da85be7a0552640d7a9083f54e444dde74cd522b20281bea0de1433c8b152f289be588890ae4fd9cfb3a16a39bfe51d52561563c7c57ded262cf19b639c02d5e6696a7a2cf60137d17b"},
		{"signature on \"leiosnode\"", sig[:], "afaaf9aef005b9797663f83e8434d037a76e098959ad8813475bf88407f0cf3efe242ac1ea069060978b439487e80f61"},
		{"proof of possession", proof[:], "b237828b51cd43d42c0c3feea37f7c808ac56f301248dcbf40f4cb7a71a8390b1994b267471416bcc68c2828e6c020ee"},
	} {
		if hex.EncodeToString(tc.got) != tc.want {
			t.Errorf("%s = %x, want %s", tc.name, tc.got, tc.want)
		}
	}
}
