package keys

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/vrf"
	"pgregory.net/rapid"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The RFC 8032 §7.1 TEST 1 key: ed25519 and VRF keys derive the same public
// key from the same seed.
const (
	rfcSeed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
	rfcPK   = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
)

// TestGoldenEnvelopes pins the exact bytes of every kind of key file.
func TestGoldenEnvelopes(t *testing.T) {
	dir := t.TempDir()
	key := ed25519.NewKeyFromSeed(unhex(t, rfcSeed))
	vrfKey, err := vrf.NewKeyFromSeed(unhex(t, rfcSeed))
	if err != nil {
		t.Fatal(err)
	}
	envelope := func(typ, desc, cborHex string) string {
		return "{\n    \"type\": \"" + typ + "\",\n    \"description\": \"" + desc + "\",\n    \"cborHex\": \"" + cborHex + "\"\n}\n"
	}
	cases := []struct {
		name  string
		write func(path string) error
		want  string
		mode  os.FileMode
	}{
		{"payment.skey", func(p string) error { return WriteSigningKey(p, Payment, key) },
			envelope("PaymentSigningKeyShelley_ed25519", "Payment Signing Key", "5820"+rfcSeed), 0o600},
		{"payment.vkey", func(p string) error { return WriteVerificationKey(p, Payment, key.Public().(ed25519.PublicKey)) },
			envelope("PaymentVerificationKeyShelley_ed25519", "Payment Verification Key", "5820"+rfcPK), 0o644},
		{"cold.skey", func(p string) error { return WriteSigningKey(p, StakePool, key) },
			envelope("StakePoolSigningKey_ed25519", "Stake Pool Operator Signing Key", "5820"+rfcSeed), 0o600},
		{"cold.vkey", func(p string) error { return WriteVerificationKey(p, StakePool, key.Public().(ed25519.PublicKey)) },
			envelope("StakePoolVerificationKey_ed25519", "Stake Pool Operator Verification Key", "5820"+rfcPK), 0o644},
		{"node.skey", func(p string) error { return WriteSigningKey(p, Node, key) },
			envelope("LeiosNodeSigningKey_ed25519", "Leios Node Network Signing Key", "5820"+rfcSeed), 0o600},
		{"node.vkey", func(p string) error { return WriteVerificationKey(p, Node, key.Public().(ed25519.PublicKey)) },
			envelope("LeiosNodeVerificationKey_ed25519", "Leios Node Network Verification Key", "5820"+rfcPK), 0o644},
		{"vrf.skey", func(p string) error { return WriteVRFSigningKey(p, vrfKey) },
			envelope("VrfSigningKey_PraosVRF", "VRF Signing Key", "5840"+rfcSeed+rfcPK), 0o600},
		{"vrf.vkey", func(p string) error { return WriteVRFVerificationKey(p, vrfKey.Public()) },
			envelope("VrfVerificationKey_PraosVRF", "VRF Verification Key", "5820"+rfcPK), 0o644},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := tc.write(path); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("file =\n%s\nwant\n%s", got, tc.want)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != tc.mode {
				t.Errorf("mode = %v, want %v", info.Mode().Perm(), tc.mode)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(cases) {
		t.Errorf("directory holds %d files, want %d (temporary files left behind?)", len(entries), len(cases))
	}
}

// TestReadsCardanoCLIFiles reads files in cardano-cli's layout, whatever
// their description and whitespace.
func TestReadsCardanoCLIFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	skey := write("payment.skey", `{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"5820`+rfcSeed+`"}`)
	got, err := ReadSigningKey(skey, Payment)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got.Public().(ed25519.PublicKey)) != rfcPK {
		t.Errorf("public key = %x", got.Public())
	}
	vskey := write("vrf.skey", "{\n  \"type\": \"VrfSigningKey_PraosVRF\",\n  \"description\": \"VRF Signing Key\",\n  \"cborHex\": \"5840"+rfcSeed+rfcPK+"\"\n}")
	v, err := ReadVRFSigningKey(vskey)
	if err != nil {
		t.Fatal(err)
	}
	if pk := v.Public(); hex.EncodeToString(pk[:]) != rfcPK {
		t.Errorf("VRF public key = %x", pk)
	}
}

// Key files from cardano-cli's own golden tests (a payment key pair made by
// address key-gen, a VRF key pair made by node key-gen-VRF), as cardano-cli
// writes them: four-space indentation, a newline at the end.
const (
	cliPaymentSkey = `{
    "type": "PaymentSigningKeyShelley_ed25519",
    "description": "Payment Signing Key",
    "cborHex": "58208547281266bc5467a10f2f50ddf10e2d0c05ebf780785ebee40c1869b08c1c35"
}
`
	cliPaymentVkey = `{
    "type": "PaymentVerificationKeyShelley_ed25519",
    "description": "Payment Verification Key",
    "cborHex": "58208dc60533b5dfa60a530955a696323a2ef4f14e8bc95a8f84cf6c441fea423427"
}
`
	cliVRFSkey = `{
    "type": "VrfSigningKey_PraosVRF",
    "description": "VRF Signing Key",
    "cborHex": "5840b492808849dcf749f9992d2be4b3d6928a19fa796c654b2219763b73ee5aaf892397922de810ace9c5c8a10dc077999e59a239a8c90cca96d150c48dc7c9be8b"
}
`
	cliVRFVkey = `{
    "type": "VrfVerificationKey_PraosVRF",
    "description": "VRF Verification Key",
    "cborHex": "58202397922de810ace9c5c8a10dc077999e59a239a8c90cca96d150c48dc7c9be8b"
}
`
)

// TestCardanoCLIGoldenFiles: cardano-cli's key files load, each signing key
// gives its verification key, and writing the keys back gives cardano-cli's
// files byte for byte.
func TestCardanoCLIGoldenFiles(t *testing.T) {
	dir := t.TempDir()
	read := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	skey, err := ReadSigningKey(read("payment.skey", cliPaymentSkey), Payment)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := ReadVerificationKey(read("payment.vkey", cliPaymentVkey), Payment)
	if err != nil {
		t.Fatal(err)
	}
	if !vkey.Equal(skey.Public()) {
		t.Fatal("cardano-cli's payment signing key does not give its verification key")
	}
	vrfSkey, err := ReadVRFSigningKey(read("vrf.skey", cliVRFSkey))
	if err != nil {
		t.Fatal(err)
	}
	vrfVkey, err := ReadVRFVerificationKey(read("vrf.vkey", cliVRFVkey))
	if err != nil {
		t.Fatal(err)
	}
	if vrfSkey.Public() != vrfVkey {
		t.Fatal("cardano-cli's VRF signing key does not give its verification key")
	}
	for _, tc := range []struct {
		name, want string
		write      func(string) error
	}{
		{"payment.skey", cliPaymentSkey, func(p string) error { return WriteSigningKey(p, Payment, skey) }},
		{"payment.vkey", cliPaymentVkey, func(p string) error { return WriteVerificationKey(p, Payment, vkey) }},
		{"vrf.skey", cliVRFSkey, func(p string) error { return WriteVRFSigningKey(p, vrfSkey) }},
		{"vrf.vkey", cliVRFVkey, func(p string) error { return WriteVRFVerificationKey(p, vrfVkey) }},
	} {
		path := filepath.Join(dir, "out-"+tc.name)
		if err := tc.write(path); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != tc.want {
			t.Errorf("%s written as\n%s\nwant cardano-cli's\n%s", tc.name, got, tc.want)
		}
	}
}

// TestReadsOldPaymentTypes: payment key files this node wrote before it used
// cardano-cli's types still load, as the same keys.
func TestReadsOldPaymentTypes(t *testing.T) {
	dir := t.TempDir()
	skeyPath, vkeyPath := filepath.Join(dir, "old.skey"), filepath.Join(dir, "old.vkey")
	old := func(typ, desc, cborHex string) []byte {
		return []byte("{\n    \"type\": \"" + typ + "\",\n    \"description\": \"" + desc + "\",\n    \"cborHex\": \"" + cborHex + "\"\n}\n")
	}
	if err := os.WriteFile(skeyPath, old("PaymentSigningKey_ed25519", "Payment Signing Key", "5820"+rfcSeed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vkeyPath, old("PaymentVerificationKey_ed25519", "Payment Verification Key", "5820"+rfcPK), 0o644); err != nil {
		t.Fatal(err)
	}
	skey, err := ReadSigningKey(skeyPath, Payment)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := ReadVerificationKey(vkeyPath, Payment)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(vkey) != rfcPK || !vkey.Equal(skey.Public()) {
		t.Fatalf("old files give %x and %x, want %s", vkey, skey.Public(), rfcPK)
	}
}

func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp("", "keys")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		seed := rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "seed")
		role := rapid.SampledFrom([]Role{Payment, StakePool, Node}).Draw(t, "role")

		key := ed25519.NewKeyFromSeed(seed)
		path := filepath.Join(dir, "k")
		if err := WriteSigningKey(path, role, key); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadSigningKey(path, role); err != nil || !got.Equal(key) {
			t.Fatalf("signing key round trip: %v", err)
		}
		pub := key.Public().(ed25519.PublicKey)
		if err := WriteVerificationKey(path, role, pub); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadVerificationKey(path, role); err != nil || !got.Equal(pub) {
			t.Fatalf("verification key round trip: %v", err)
		}

		vk, err := vrf.NewKeyFromSeed(seed)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteVRFSigningKey(path, vk); err != nil {
			t.Fatal(err)
		}
		got, err := ReadVRFSigningKey(path)
		if err != nil || got.Bytes() != vk.Bytes() {
			t.Fatalf("VRF signing key round trip: %v", err)
		}
		if err := WriteVRFVerificationKey(path, vk.Public()); err != nil {
			t.Fatal(err)
		}
		if pk, err := ReadVRFVerificationKey(path); err != nil || pk != vk.Public() {
			t.Fatalf("VRF verification key round trip: %v", err)
		}
	})
}

func TestGenerate(t *testing.T) {
	a, err := GenerateSigningKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateSigningKey(bytes.NewReader(bytes.Repeat([]byte{1}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if a.Equal(b) || !b.Equal(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))) {
		t.Error("GenerateSigningKey does not derive from the reader's seed")
	}
	if _, err := GenerateSigningKey(bytes.NewReader(nil)); err == nil {
		t.Error("GenerateSigningKey with an empty reader succeeded")
	}
	v, err := GenerateVRFKey(bytes.NewReader(bytes.Repeat([]byte{1}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if v.Seed() != [32]byte(bytes.Repeat([]byte{1}, 32)) {
		t.Error("GenerateVRFKey does not use the reader's seed")
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	seed := rfcSeed
	cases := []struct {
		name    string
		content string
		read    func(path string) error
		want    error
		mention string
	}{
		{"wrong type: vkey as skey",
			`{"type":"PaymentVerificationKeyShelley_ed25519","description":"","cborHex":"5820` + rfcPK + `"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrWrongType, "PaymentSigningKeyShelley_ed25519"},
		{"wrong type: old vkey name as skey",
			`{"type":"PaymentVerificationKey_ed25519","description":"","cborHex":"5820` + rfcPK + `"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrWrongType, "PaymentSigningKeyShelley_ed25519"},
		{"wrong type: old skey name as vkey",
			`{"type":"PaymentSigningKey_ed25519","description":"","cborHex":"5820` + rfcPK + `"}`,
			func(p string) error { _, err := ReadVerificationKey(p, Payment); return err }, ErrWrongType, "PaymentVerificationKeyShelley_ed25519"},
		{"wrong type: payment as pool",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"5820` + seed + `"}`,
			func(p string) error { _, err := ReadSigningKey(p, StakePool); return err }, ErrWrongType, "StakePoolSigningKey_ed25519"},
		{"wrong type: node key as pool key",
			`{"type":"LeiosNodeSigningKey_ed25519","description":"","cborHex":"5820` + seed + `"}`,
			func(p string) error { _, err := ReadSigningKey(p, StakePool); return err }, ErrWrongType, "StakePoolSigningKey_ed25519"},
		{"wrong type: ed25519 as VRF",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"5820` + seed + `"}`,
			func(p string) error { _, err := ReadVRFSigningKey(p); return err }, ErrWrongType, "VrfSigningKey_PraosVRF"},
		{"wrong type: extended key",
			`{"type":"PaymentExtendedSigningKey_ed25519_bip32","description":"","cborHex":"5820` + seed + `"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrWrongType, "PaymentExtendedSigningKey"},
		{"bad hex",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"58zz"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrMalformed, "cborHex"},
		{"odd hex",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"5820` + seed + `0"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrMalformed, "cborHex"},
		{"not JSON",
			`type: PaymentSigningKeyShelley_ed25519`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrMalformed, ""},
		{"missing cborHex",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":""}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrMalformed, "cborHex"},
		{"CBOR not a byte string",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"1820"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrMalformed, "cborHex"},
		{"CBOR text string",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"7820` + seed + `"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrMalformed, "cborHex"},
		{"CBOR trailing bytes",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"5820` + seed + `00"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrMalformed, "cborHex"},
		{"CBOR over-long length",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"590020` + seed + `"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrMalformed, "canonical"},
		{"CBOR truncated",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"5820` + seed[:40] + `"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrMalformed, "cborHex"},
		{"seed too short",
			`{"type":"PaymentSigningKeyShelley_ed25519","description":"","cborHex":"581f` + seed[:62] + `"}`,
			func(p string) error { _, err := ReadSigningKey(p, Payment); return err }, ErrWrongLength, "31 bytes"},
		{"vkey too long",
			`{"type":"PaymentVerificationKeyShelley_ed25519","description":"","cborHex":"5821` + rfcPK + `00"}`,
			func(p string) error { _, err := ReadVerificationKey(p, Payment); return err }, ErrWrongLength, "33 bytes"},
		{"VRF skey without public half",
			`{"type":"VrfSigningKey_PraosVRF","description":"","cborHex":"5820` + seed + `"}`,
			func(p string) error { _, err := ReadVRFSigningKey(p); return err }, ErrWrongLength, "want 64"},
		{"VRF skey with a foreign public half",
			`{"type":"VrfSigningKey_PraosVRF","description":"","cborHex":"5840` + seed + strings.Repeat("11", 32) + `"}`,
			func(p string) error { _, err := ReadVRFSigningKey(p); return err }, ErrKeyMismatch, ""},
		{"VRF vkey wrong length",
			`{"type":"VrfVerificationKey_PraosVRF","description":"","cborHex":"5840` + seed + rfcPK + `"}`,
			func(p string) error { _, err := ReadVRFVerificationKey(p); return err }, ErrWrongLength, "want 32"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "key"+string(rune('a'+i)))
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := tc.read(path)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q does not mention %q", err, tc.mention)
			}
		})
	}
	if _, err := ReadSigningKey(filepath.Join(dir, "absent"), Payment); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	if _, err := ReadSigningKey(filepath.Join(dir, "absent"), Role(0)); err == nil || !strings.Contains(err.Error(), "unknown role") {
		t.Errorf("zero role: %v", err)
	}
	if err := WriteSigningKey(filepath.Join(dir, "short"), Payment, ed25519.PrivateKey{1, 2}); !errors.Is(err, ErrWrongLength) {
		t.Errorf("writing a short key: %v", err)
	}
	if err := WriteVerificationKey(filepath.Join(dir, "missing-dir", "k"), Payment, make(ed25519.PublicKey, 32)); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

// TestOverwriteTightensMode: rewriting a world-readable file with a secret
// key leaves it 0600, not with the old mode.
func TestOverwriteTightensMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSigningKey(path, Payment, ed25519.NewKeyFromSeed(make([]byte, 32))); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", info.Mode().Perm())
	}
}

// TestAddress uses the CIP-19 test vectors: the payment key
// addr_vk1w0l2sr2zgfm26ztc6nl9xy8ghsk5sh6ldwemlpmp9xylzy4dtf7st80zhd gives
// the type-6 addresses addr_test1vz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzerspjrlsz
// (network 0) and addr1vx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzers66hrl8
// (network 1), here bech32-decoded to hex.
func TestAddress(t *testing.T) {
	vkey := ed25519.PublicKey(unhex(t, "73fea80d424276ad0978d4fe5310e8bc2d485f5f6bb3bf87612989f112ad5a7d"))
	const hash = "9493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8e"
	if got := PaymentKeyHash(vkey); hex.EncodeToString(got[:]) != hash {
		t.Errorf("PaymentKeyHash = %x, want %s", got, hash)
	}
	for _, tc := range []struct {
		network byte
		want    string
	}{{0, "60" + hash}, {1, "61" + hash}} {
		got, err := EnterpriseAddress(vkey, tc.network)
		if err != nil || hex.EncodeToString(got) != tc.want {
			t.Errorf("EnterpriseAddress(network %d) = %x, %v; want %s", tc.network, got, err, tc.want)
		}
	}
	if _, err := EnterpriseAddress(vkey, 16); err == nil {
		t.Error("network id 16 accepted")
	}
	// The RFC 8032 key, hashed independently.
	if got := PaymentKeyHash(unhex(t, rfcPK)); hex.EncodeToString(got[:]) != "35dedd2982a03cf39e7dce03c839994ffdec2ec6b04f1cf2d40e61a3" {
		t.Errorf("PaymentKeyHash(RFC 8032 key) = %x", got)
	}
}

func TestParseEnvelope(t *testing.T) {
	e := newEnvelope("PaymentSigningKeyShelley_ed25519", "Payment Signing Key", unhex(t, rfcSeed))
	got, err := ParseEnvelope(e.Marshal())
	if err != nil || got != e {
		t.Fatalf("ParseEnvelope(Marshal) = %+v, %v; want %+v", got, err, e)
	}
}

// TestDuplicateKeyRefused: a key file with a field twice — two cborHex, of
// which JSON would keep the last — is refused in one line naming the file
// and the field.
func TestDuplicateKeyRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "issuer.skey")
	content := `{"type":"StakePoolSigningKey_ed25519","description":"","cborHex":"5820` + rfcSeed + `","cborHex":"5820` + strings.Repeat("11", 32) + `"}`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadSigningKey(path, StakePool)
	want := path + `: keys: malformed key file: duplicate key "cborHex": it appears twice, and only the last would count; keep one`
	if !errors.Is(err, ErrMalformed) || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
