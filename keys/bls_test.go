package keys

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/bls"
)

// The key files of pool 1 of the Haskell Leios prototype's devnet.
const (
	prototypeBLSSigningKey = `{
    "type": "BlsSigningKey_bls12-381-BLS-Signature-Mininimal-Signature-Size",
    "description": "BLS12-381 signing key",
    "cborHex": "582071b3ebe5699365359ddafcc0f65f8c63281ddd44273cde28787c86d2efdb5519"
}
`
	prototypeBLSVerificationKey = `{
    "type": "BlsVerificationKey_bls12-381-BLS-Signature-Mininimal-Signature-Size",
    "description": "BLS12-381 verification key",
    "cborHex": "5860ae23eff571532a2e0542b2f7a4e8ae59c1dc40aafdec0ce3a3e2d36d0240e1bbb02d417f56388cd44bd553679e6c6dc40173b5c7dcb94ba6f08a1ba20796d0c243ea2a5e913a8dd0dfce27822405b2daa53c60557645d9320908690e888eefcf"
}
`
)

// TestBLSPrototypeFiles: the prototype's key files load, match each other,
// and are written back byte for byte.
func TestBLSPrototypeFiles(t *testing.T) {
	dir := t.TempDir()
	skeyPath, vkeyPath := filepath.Join(dir, "bls.skey"), filepath.Join(dir, "bls.vkey")
	if err := os.WriteFile(skeyPath, []byte(prototypeBLSSigningKey), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vkeyPath, []byte(prototypeBLSVerificationKey), 0o644); err != nil {
		t.Fatal(err)
	}
	sk, err := ReadBLSSigningKey(skeyPath)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := ReadBLSVerificationKey(vkeyPath)
	if err != nil {
		t.Fatal(err)
	}
	if !sk.PublicKey().Equal(pk) {
		t.Fatal("the prototype's signing key does not give its verification key")
	}
	for _, tc := range []struct {
		name, want string
		write      func(string) error
		mode       os.FileMode
	}{
		{"skey", prototypeBLSSigningKey, func(p string) error { return WriteBLSSigningKey(p, sk) }, 0o600},
		{"vkey", prototypeBLSVerificationKey, func(p string) error { return WriteBLSVerificationKey(p, pk) }, 0o644},
	} {
		path := filepath.Join(dir, "out."+tc.name)
		if err := tc.write(path); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != tc.want {
			t.Errorf("%s written as\n%s\nwant\n%s", tc.name, got, tc.want)
		}
		if info, _ := os.Stat(path); info.Mode().Perm() != tc.mode {
			t.Errorf("%s mode %v, want %v", tc.name, info.Mode().Perm(), tc.mode)
		}
	}
}

func TestBLSGenerate(t *testing.T) {
	dir := t.TempDir()
	pk, proof, err := GenerateBLSKeyFiles(filepath.Join(dir, "bls.skey"), filepath.Join(dir, "bls.vkey"))
	if err != nil {
		t.Fatal(err)
	}
	sk, err := ReadBLSSigningKey(filepath.Join(dir, "bls.skey"))
	if err != nil {
		t.Fatal(err)
	}
	vk, err := ReadBLSVerificationKey(filepath.Join(dir, "bls.vkey"))
	if err != nil {
		t.Fatal(err)
	}
	if !sk.PublicKey().Equal(pk) || !vk.Equal(pk) || !pk.VerifyPossession(proof) {
		t.Error("generated files, key and proof do not belong together")
	}
	seeded, err := GenerateBLSKey(bytes.NewReader(bytes.Repeat([]byte{5}, bls.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := bls.KeyFromSeed(bytes.Repeat([]byte{5}, bls.SeedSize))
	if seeded.Bytes() != want.Bytes() {
		t.Error("GenerateBLSKey does not derive from the reader's bytes")
	}
}

func TestBLSReadErrors(t *testing.T) {
	dir := t.TempDir()
	envelope := func(typ, cborHex string) string {
		return `{"type":"` + typ + `","description":"","cborHex":"` + cborHex + `"}`
	}
	vkeyHex := "ae23eff571532a2e0542b2f7a4e8ae59c1dc40aafdec0ce3a3e2d36d0240e1bbb02d417f56388cd44bd553679e6c6dc40173b5c7dcb94ba6f08a1ba20796d0c243ea2a5e913a8dd0dfce27822405b2daa53c60557645d9320908690e888eefcf"
	readSK := func(p string) error { _, err := ReadBLSSigningKey(p); return err }
	readVK := func(p string) error { _, err := ReadBLSVerificationKey(p); return err }
	for i, tc := range []struct {
		name, content string
		read          func(string) error
		want          error
		mention       string
	}{
		{"vkey as skey", envelope(blsVerificationKeyType, "5860"+vkeyHex), readSK, ErrWrongType, blsSigningKeyType},
		{"ed25519 key as BLS", envelope("PaymentSigningKey_ed25519", "5820"+rfcSeed), readSK, ErrWrongType, blsSigningKeyType},
		{"zero scalar", envelope(blsSigningKeyType, "5820"+strings.Repeat("00", 32)), readSK, bls.ErrInvalidSecretKey, "zero"},
		{"scalar above the order", envelope(blsSigningKeyType, "5820"+strings.Repeat("ff", 32)), readSK, ErrMalformed, "group order"},
		{"short scalar", envelope(blsSigningKeyType, "581f"+strings.Repeat("11", 31)), readSK, ErrWrongLength, "want 32"},
		{"identity vkey", envelope(blsVerificationKeyType, "5860c0"+strings.Repeat("00", 95)), readVK, bls.ErrInvalidPublicKey, "identity"},
		{"vkey with its last byte changed", envelope(blsVerificationKeyType, "5860"+vkeyHex[:190]+"00"), readVK, ErrMalformed, "public key"},
		{"vkey of G1 size", envelope(blsVerificationKeyType, "5830"+vkeyHex[:96]), readVK, ErrWrongLength, "want 96"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "key"+string(rune('a'+i)))
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := tc.read(path)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error = %v, want %v naming the file and %q", err, tc.want, tc.mention)
			}
		})
	}
}
