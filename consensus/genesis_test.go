package consensus

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/ledger"
)

// testPool is a genesis pool with keys derived from its index, and its BLS
// secret key.
func testPool(t testing.TB, i int, stake uint64) (Pool, *bls.SecretKey) {
	t.Helper()
	seed := make([]byte, 32)
	seed[0], seed[1] = byte(i), byte(i>>8)
	issuer := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	seed[2] = 0xb1
	voting, err := bls.KeyFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	p := Pool{
		Name:       fmt.Sprintf("pool%d", i),
		IssuerVKey: hex.EncodeToString(issuer),
		VRFVKey:    strings.Repeat(fmt.Sprintf("%02x", i%256), 32),
		Stake:      stake,
	}
	p.SetVotingKey(voting.PublicKey(), voting.ProvePossession())
	return p, voting
}

// testGenesis is a genesis of pools of these stakes, the committee stake
// fraction sigma and the quorum stake fraction tau; it returns the pools'
// BLS keys too.
func testGenesis(t testing.TB, sigma, tau string, stakes ...uint64) (*Genesis, []*bls.SecretKey) {
	t.Helper()
	g := &Genesis{
		SystemStart:      time.Unix(0, 0),
		SlotLengthMs:     1000,
		ActiveSlotsCoeff: "0.1",
		SecurityParam:    5,
		EpochNonce:       strings.Repeat("00", 32),
		ProtocolParams:   ledger.DefaultParams(),
		Leios:            DefaultLeiosParams(),
	}
	g.Leios.CommitteeStakeFraction, g.Leios.QuorumStakeFraction = json.Number(sigma), json.Number(tau)
	var keys []*bls.SecretKey
	for i, s := range stakes {
		p, k := testPool(t, i, s)
		g.Pools, keys = append(g.Pools, p), append(keys, k)
	}
	return g, keys
}

func TestCheckVotingKeys(t *testing.T) {
	other, _ := testPool(t, 9, 1)
	g, _ := testGenesis(t, "0.99", "0.75", 1, 1, 1)
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	pool0Key := g.Pools[0].BLSVKey
	cases := []struct {
		name, want string
		edit       func(g *Genesis)
	}{
		{"no key", "pool 1 (pool1) has no blsVKey", func(g *Genesis) { g.Pools[1].BLSVKey = "" }},
		{"not hex", "pool 1 (pool1) blsVKey is not hex", func(g *Genesis) { g.Pools[1].BLSVKey = "zz" }},
		{"short", "pool 1 (pool1) blsVKey: bls: invalid public key: 48 bytes", func(g *Genesis) { g.Pools[1].BLSVKey = g.Pools[1].BLSPoP }},
		{"identity", "pool 1 (pool1) blsVKey: bls: invalid public key: the identity", func(g *Genesis) { g.Pools[1].BLSVKey = "c0" + strings.Repeat("00", 95) }},
		{"no proof", "pool 2 (pool2) has no blsPoP", func(g *Genesis) { g.Pools[2].BLSPoP = "" }},
		{"proof not hex", "pool 2 (pool2) blsPoP is not hex", func(g *Genesis) { g.Pools[2].BLSPoP = "x" }},
		{"proof not a point", "pool 2 (pool2) blsPoP: bls: invalid signature", func(g *Genesis) { g.Pools[2].BLSPoP = strings.Repeat("00", 48) }},
		{"another key's proof", "pool 2 (pool2) blsPoP does not prove possession of blsVKey", func(g *Genesis) { g.Pools[2].BLSPoP = other.BLSPoP }},
		{"a key without its proof", "pool 2 (pool2) blsPoP does not prove possession of blsVKey", func(g *Genesis) { g.Pools[2].BLSVKey = other.BLSVKey }},
		{"a key twice", "pool 2 (pool2) blsVKey is pool 0's too", func(g *Genesis) { g.Pools[2].BLSVKey, g.Pools[2].BLSPoP = pool0Key, g.Pools[0].BLSPoP }},
		{"a key twice, in capitals", "pool 2 (pool2) blsVKey is pool 0's too", func(g *Genesis) {
			g.Pools[2].BLSVKey, g.Pools[2].BLSPoP = strings.ToUpper(pool0Key), g.Pools[0].BLSPoP
		}},
		{"an issuer twice", "pool 1 (pool1) issuerVKey is pool 0's too", func(g *Genesis) { g.Pools[1].IssuerVKey = g.Pools[0].IssuerVKey }},
		{"no coverage", `leios.committeeStakeFraction "" is not a number`, func(g *Genesis) { g.Leios.CommitteeStakeFraction = "" }},
		{"zero coverage", "leios.committeeStakeFraction 0 must be in (0, 1]", func(g *Genesis) { g.Leios.CommitteeStakeFraction = "0" }},
		{"coverage above 1", "leios.committeeStakeFraction 1.01 must be in (0, 1]", func(g *Genesis) { g.Leios.CommitteeStakeFraction = "1.01" }},
		{"no quorum", `leios.quorumStakeFraction "" is not a number`, func(g *Genesis) { g.Leios.QuorumStakeFraction = "" }},
		{"zero quorum", "leios.quorumStakeFraction 0 must be in (0, leios.committeeStakeFraction 0.99)", func(g *Genesis) { g.Leios.QuorumStakeFraction = "0" }},
		{"quorum at the coverage", "leios.quorumStakeFraction 0.99 must be in (0, leios.committeeStakeFraction 0.99)", func(g *Genesis) { g.Leios.QuorumStakeFraction = "0.99" }},
		{"stake overflows", "total stake overflows 64 bits", func(g *Genesis) { g.Pools[0].Stake, g.Pools[1].Stake = math.MaxUint64, 1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := testGenesis(t, "0.99", "0.75", 1, 1, 1)
			tc.edit(g)
			err := g.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want an error containing %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("the error is more than one line: %q", err)
			}
		})
	}
	if err := g.Check(); err != nil {
		t.Errorf("the cases edited a shared genesis: %v", err)
	}
	if _, err := NewValidator(g, nil); err != nil {
		t.Errorf("NewValidator: %v", err)
	}
}

// TestReadGenesisLeiosFields: the committee's parameters are read from the
// file; the Fait Accompli fields CIP-0164 dropped are refused by name, with
// what replaced them, and any other unknown field is refused too.
func TestReadGenesisLeiosFields(t *testing.T) {
	g, _ := testGenesis(t, "0.9", "0.6", 5, 3, 2)
	path := filepath.Join(t.TempDir(), "genesis.json")
	if err := WriteGenesis(path, g); err != nil {
		t.Fatal(err)
	}
	read, err := ReadGenesis(path)
	if err != nil {
		t.Fatal(err)
	}
	if read.Leios != g.Leios {
		t.Errorf("read leios %+v, wrote %+v", read.Leios, g.Leios)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ field, want string }{
		{`"committeeSeats": 500`, "leios.committeeSeats is no longer a parameter: the committee is chosen by stake-based truncation; set leios.committeeStakeFraction"},
		{`"quorum": 0.75`, "leios.quorum is no longer a parameter: the quorum is a share of the total active stake, not of the committee's; set leios.quorumStakeFraction"},
		{`"committeeStakeFractions": 0.9`, `leios: json: unknown field "committeeStakeFractions"`},
	} {
		edited := bytes.Replace(written, []byte(`"leios": {`), []byte(`"leios": {`+tc.field+`,`), 1)
		if bytes.Equal(edited, written) {
			t.Fatal("the written genesis has no leios object")
		}
		if err := os.WriteFile(path, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadGenesis(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("with %s: %v, want an error containing %q", tc.field, err, tc.want)
		}
	}
}

// TestReadGenesisDuplicateKeys: a parameter given twice, at any depth, is
// refused in one line naming the file and the key, not read as its last
// value.
func TestReadGenesisDuplicateKeys(t *testing.T) {
	g, _ := testGenesis(t, "0.9", "0.6", 5, 3, 2)
	path := filepath.Join(t.TempDir(), "genesis.json")
	if err := WriteGenesis(path, g); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to, key string }{
		{`"securityParam": `, `"securityParam": 1, "securityParam": `, "securityParam"},
		{`"lVote": `, `"lVote": 1, "lVote": `, "leios.lVote"},
		{`"stake": `, `"stake": 0, "stake": `, "pools[0].stake"},
	} {
		edited := bytes.Replace(written, []byte(tc.from), []byte(tc.to), 1)
		if bytes.Equal(edited, written) {
			t.Fatalf("the written genesis has no %s", tc.from)
		}
		if err := os.WriteFile(path, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		want := "genesis " + path + `: duplicate key "` + tc.key + `": it appears twice, and only the last would count; keep one`
		if _, err := ReadGenesis(path); err == nil || err.Error() != want {
			t.Errorf("%s twice: %v\nwant %s", tc.key, err, want)
		}
	}
}

// TestReadGenesisEncoding: leios.encoding is written by name, read back;
// a genesis without it is the prototype's, as every genesis written before
// it existed; an unknown name is refused in one line.
func TestReadGenesisEncoding(t *testing.T) {
	g, _ := testGenesis(t, "0.9", "0.6", 5, 3, 2)
	if g.Leios.Encoding != block.EncodingCIP {
		t.Fatalf("a new genesis's encoding is %s, want cip", g.Leios.Encoding)
	}
	path := filepath.Join(t.TempDir(), "genesis.json")
	if err := WriteGenesis(path, g); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(written, []byte(`"encoding": "cip"`)) {
		t.Fatalf("the written genesis does not name its encoding:\n%s", written)
	}
	for _, tc := range []struct {
		from, to string
		want     block.Encoding
		err      string
	}{
		{`"encoding": "cip"`, `"encoding": "cip"`, block.EncodingCIP, ""},
		{`"encoding": "cip"`, `"encoding": "prototype"`, block.EncodingPrototype, ""},
		{`,
    "encoding": "cip"`, ``, block.EncodingPrototype, ""},
		{`"encoding": "cip"`, `"encoding": "CIP"`, 0, `: leios.encoding "CIP" is neither "cip" nor "prototype"`},
		{`"encoding": "cip"`, `"encoding": ""`, 0, `: leios.encoding "" is neither "cip" nor "prototype"`},
	} {
		edited := bytes.Replace(written, []byte(tc.from), []byte(tc.to), 1)
		if tc.from != tc.to && bytes.Equal(edited, written) {
			t.Fatalf("the written genesis has no %q", tc.from)
		}
		if err := os.WriteFile(path, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		read, err := ReadGenesis(path)
		if tc.err != "" {
			if err == nil || err.Error() != "genesis "+path+tc.err {
				t.Errorf("with %s: %v, want genesis %s%s", tc.to, err, path, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("with %q: %v", tc.to, err)
		}
		if read.Leios.Encoding != tc.want {
			t.Errorf("with %q: encoding %s, want %s", tc.to, read.Leios.Encoding, tc.want)
		}
	}
	g.Leios.Encoding = 7
	if err := g.Check(); err == nil || !strings.Contains(err.Error(), "leios.encoding") {
		t.Errorf("Check of encoding 7: %v", err)
	}
}
