package ledger

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// Hand-assembled pieces of the golden txs. Expected digests were computed
// independently (Python hashlib.blake2b) from the same hex.
var (
	hexT11  = strings.Repeat("11", 32) // a tx id
	hexT55  = strings.Repeat("55", 32) // another tx id
	hexA22  = strings.Repeat("22", 28) // a payment key hash
	hexS66  = strings.Repeat("66", 28) // a stake key hash
	hexVK   = strings.Repeat("33", 32) // a vkey
	hexSIG  = strings.Repeat("44", 64) // a (meaningless) signature
	hexEnt  = "581d" + "60" + hexA22   // bytes(29): enterprise address, network 0
	hexBase = "5839" + "00" + hexA22 + hexS66
	hexWit  = "82" + "5820" + hexVK + "5840" + hexSIG
)

func unhex(t testing.TB, parts ...string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(parts, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr(v uint64) *uint64 { return &v }

func TestDecodeTxGolden(t *testing.T) {
	tests := []struct {
		name            string
		body, witnesses string
		id, hash        string
		inputs          []TxIn
		outputs         []TxOut
		outputSizes     []int
		fee             uint64
		ttl, start      *uint64
		witnessCount    int
		size            int
	}{
		{
			name: "plain sets, array output",
			body: "a3" +
				"00" + "81" + "82" + "5820" + hexT11 + "00" +
				"01" + "81" + "82" + hexEnt + "1a000f4240" +
				"02" + "1a00030d40",
			witnesses:    "a1" + "00" + "81" + hexWit,
			id:           "dcae1357ecbef1c22ac343e2fe3e953dcc7f8897394acfe9ae25fd3a7bb7b5e0",
			hash:         "c59dec330e3fa074fcb6773ca1e8b6a7932733a0b0f509677fc4b0fa877fb047",
			inputs:       []TxIn{{TxID: [32]byte(unhex(t, hexT11)), Index: 0}},
			outputs:      []TxOut{{Address: unhex(t, "60", hexA22), Coin: 1_000_000}},
			outputSizes:  []int{37},
			fee:          200_000,
			witnessCount: 1,
			size:         191,
		},
		{
			name: "tag 258 sets, ttl",
			body: "a4" +
				"00" + "d90102" + "82" + "82" + "5820" + hexT11 + "01" + "82" + "5820" + hexT55 + "1903e8" +
				"01" + "81" + "82" + hexEnt + "1a000f4240" +
				"02" + "1a00030d40" +
				"03" + "1a05f5e100",
			witnesses: "a1" + "00" + "d90102" + "81" + hexWit,
			id:        "1498326facb562f5821913ce197cba3027eb9f29f86795e280a9cbe6600f8036",
			hash:      "2507f7fb3e47fc5a3a6ed812bedae53830b50d091f36e3f9ffacb041b86bccfa",
			inputs: []TxIn{
				{TxID: [32]byte(unhex(t, hexT11)), Index: 1},
				{TxID: [32]byte(unhex(t, hexT55)), Index: 1000},
			},
			outputs:      []TxOut{{Address: unhex(t, "60", hexA22), Coin: 1_000_000}},
			outputSizes:  []int{37},
			fee:          200_000,
			ttl:          ptr(100_000_000),
			witnessCount: 1,
			size:         241,
		},
		{
			name: "map outputs, validity start, no witnesses",
			body: "a4" +
				"00" + "81" + "82" + "5820" + hexT11 + "02" +
				"01" + "82" +
				"a2" + "00" + hexBase + "01" + "1b000000e8d4a51000" +
				"a2" + "00" + hexEnt + "01" + "1a001e8480" +
				"02" + "1a0002a3b3" +
				"08" + "182a",
			witnesses: "a0",
			id:        "5739a8fcf5e2f4288d2eb7597ec3327734210e011608cc4443b4be9c5af8f128",
			hash:      "86bcf3b21a73aa62c4c6368964633dbe05d2b1a3d23d0272cd1d522128dca970",
			inputs:    []TxIn{{TxID: [32]byte(unhex(t, hexT11)), Index: 2}},
			outputs: []TxOut{
				{Address: unhex(t, "00", hexA22, hexS66), Coin: 1_000_000_000_000},
				{Address: unhex(t, "60", hexA22), Coin: 2_000_000},
			},
			outputSizes: []int{71, 39},
			fee:         172_979, // 0x2a3b3
			start:       ptr(42),
			size:        164,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := unhex(t, "84", tt.body, tt.witnesses, "f5f6")
			tx, err := DecodeTx(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(idOf(tx)); got != tt.id {
				t.Errorf("ID = %s, want %s", got, tt.id)
			}
			if got := hex.EncodeToString(hashOf(tx)); got != tt.hash {
				t.Errorf("Hash = %s, want %s", got, tt.hash)
			}
			if tx.Size() != tt.size || !bytes.Equal(tx.Bytes(), raw) {
				t.Errorf("Size = %d, want %d; bytes kept: %v", tx.Size(), tt.size, bytes.Equal(tx.Bytes(), raw))
			}
			if !bytes.Equal(tx.BodyBytes(), unhex(t, tt.body)) {
				t.Errorf("BodyBytes = %x", tx.BodyBytes())
			}
			if !equalTxIns(tx.Inputs, tt.inputs) {
				t.Errorf("Inputs = %v, want %v", tx.Inputs, tt.inputs)
			}
			if len(tx.Outputs) != len(tt.outputs) {
				t.Fatalf("%d outputs, want %d", len(tx.Outputs), len(tt.outputs))
			}
			for i, o := range tt.outputs {
				if !bytes.Equal(tx.Outputs[i].Address, o.Address) || tx.Outputs[i].Coin != o.Coin {
					t.Errorf("output %d = %x/%d, want %x/%d", i, tx.Outputs[i].Address, tx.Outputs[i].Coin, o.Address, o.Coin)
				}
				if tx.OutputSize(i) != tt.outputSizes[i] {
					t.Errorf("output %d size %d, want %d", i, tx.OutputSize(i), tt.outputSizes[i])
				}
			}
			if tx.Fee != tt.fee || !equalOpt(tx.TTL, tt.ttl) || !equalOpt(tx.ValidityStart, tt.start) {
				t.Errorf("fee %d ttl %v start %v", tx.Fee, tx.TTL, tx.ValidityStart)
			}
			if len(tx.Witnesses) != tt.witnessCount {
				t.Fatalf("%d witnesses, want %d", len(tx.Witnesses), tt.witnessCount)
			}
			for _, w := range tx.Witnesses {
				if hex.EncodeToString(w.VKey[:]) != hexVK || hex.EncodeToString(w.Signature[:]) != hexSIG {
					t.Errorf("witness %x %x", w.VKey, w.Signature)
				}
			}
			// The decoder keeps its own copy of the bytes.
			raw[len(raw)-1] = 0
			if tx.Bytes()[tx.Size()-1] != cborNull {
				t.Error("Tx shares the caller's buffer")
			}
		})
	}
}

func idOf(tx *Tx) []byte   { id := tx.ID(); return id[:] }
func hashOf(tx *Tx) []byte { h := tx.Hash(); return h[:] }

func equalTxIns(a, b []TxIn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalOpt(a, b *uint64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// The tx id is over the body's own bytes: a non-minimal encoding decodes to
// the same fields but has its own id, as on Cardano.
func TestDecodeTxHashesWireBytes(t *testing.T) {
	minimal := "a3" + "00" + "81" + "82" + "5820" + hexT11 + "00" + "01" + "80" + "02" + "1a00030d40"
	padded := "a3" + "00" + "81" + "82" + "5820" + hexT11 + "1800" + "01" + "80" + "02" + "1b0000000000030d40"
	a, err := DecodeTx(unhex(t, "84", minimal, "a0f5f6"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeTx(unhex(t, "84", padded, "a0f5f6"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Fee != b.Fee || a.Inputs[0] != b.Inputs[0] {
		t.Fatal("same fields expected")
	}
	if a.ID() == b.ID() || a.ID() != hash256(unhex(t, minimal)) || b.ID() != hash256(unhex(t, padded)) {
		t.Fatal("tx id must be the hash of the body bytes as received")
	}
}

func TestDecodeTxRejects(t *testing.T) {
	in := "00" + "81" + "82" + "5820" + hexT11 + "00"
	out := "01" + "81" + "82" + hexEnt + "1a000f4240"
	fee := "02" + "1a00030d40"
	body3 := "a3" + in + out + fee
	tx := func(body, wits string) string { return "84" + body + wits + "f5f6" }
	withKey := func(kv string) string { return tx("a4"+in+out+fee+kv, "a0") }
	withOutput := func(o string) string { return tx("a3"+in+"01"+"81"+o+fee, "a0") }
	withWitKey := func(kv string) string { return tx(body3, "a1"+kv) }

	tests := []struct {
		name, raw string
		want      error
		mention   string // the error must name this
	}{
		{"certificates", withKey("04" + "80"), ErrUnsupported, "certificates"},
		{"withdrawals", withKey("05" + "a0"), ErrUnsupported, "withdrawals"},
		{"aux data hash without aux data", withKey("07" + "5820" + hexT11), ErrAuxDataMissing, "key 7 is 1111"},
		{"mint", withKey("09" + "a0"), ErrUnsupported, "mint"},
		{"collateral", withKey("0d" + "80"), ErrUnsupported, "collateral"},
		{"required signers", withKey("0e" + "80"), ErrUnsupported, "required signers"},
		{"network id key", withKey("0f" + "00"), ErrUnsupported, "network id"},
		{"reference inputs", withKey("12" + "80"), ErrUnsupported, "reference inputs"},
		{"voting", withKey("13" + "a0"), ErrUnsupported, "voting"},
		{"unknown body key", withKey("18ff" + "00"), ErrMalformed, "unknown body key 255"},
		{"text body key", withKey("61" + "78" + "00"), ErrMalformed, ""},
		{"tagged body key", withKey("d90102" + "03" + "00"), ErrMalformed, ""},
		{"duplicate body key", withKey("02" + "00"), ErrMalformed, ""},
		{"is_valid false", "84" + body3 + "a0" + "f4f6", ErrUnsupported, "is_valid"},
		{"is_valid not bool", "84" + body3 + "a0" + "01f6", ErrMalformed, "is_valid"},
		{"aux data without its hash", "84" + body3 + "a0" + "f5" + "a0", ErrAuxDataHashMissing, "auxiliary data of 1 bytes"},
		{"multi-asset", withOutput("82" + hexEnt + "82" + "1a000f4240" + "a0"), ErrUnsupported, "multi-asset"},
		{"deep multi-asset", withOutput("82" + hexEnt + "82" + "1a000f4240" + "a1" + "581c" + hexA22 + "a1" + "43414243" + "01"), ErrUnsupported, "multi-asset"},
		{"deep inline datum", withOutput("a3" + "00" + hexEnt + "01" + "1a000f4240" + "02" + "8201" + "d818" + "4c" + "81818181818181818181" + "8100"), ErrUnsupported, "datum"},
		{"datum hash", withOutput("83" + hexEnt + "1a000f4240" + "5820" + hexT11), ErrUnsupported, "datum hash"},
		{"inline datum", withOutput("a3" + "00" + hexEnt + "01" + "1a000f4240" + "02" + "820000"), ErrUnsupported, "datum"},
		{"reference script", withOutput("a3" + "00" + hexEnt + "01" + "1a000f4240" + "03" + "4100"), ErrUnsupported, "reference script"},
		{"script payment address", withOutput("82" + "581d" + "70" + hexA22 + "1a000f4240"), ErrUnsupported, "script payment credential"},
		{"script base address", withOutput("82" + "5839" + "10" + hexA22 + hexS66 + "1a000f4240"), ErrUnsupported, "script payment credential"},
		{"pointer address", withOutput("82" + "5820" + "40" + hexA22 + "010203" + "1a000f4240"), ErrUnsupported, "pointer address"},
		{"reward address", withOutput("82" + "581d" + "e0" + hexA22 + "1a000f4240"), ErrUnsupported, "reward"},
		{"byron address", withOutput("82" + "4182" + "1a000f4240"), ErrUnsupported, "Byron"},
		{"short enterprise address", withOutput("82" + "581c" + "60" + strings.Repeat("22", 27) + "1a000f4240"), ErrMalformed, "address type 6 of 28 bytes"},
		{"address not bytes", withOutput("82" + "00" + "1a000f4240"), ErrMalformed, "address"},
		{"negative coin", withOutput("82" + hexEnt + "20"), ErrMalformed, "coin"},
		{"native scripts", withWitKey("01" + "80"), ErrUnsupported, "native scripts"},
		{"bootstrap witnesses", withWitKey("02" + "80"), ErrUnsupported, "bootstrap"},
		{"redeemers", withWitKey("05" + "80"), ErrUnsupported, "redeemers"},
		{"short vkey", tx(body3, "a1"+"00"+"81"+"82"+"581f"+strings.Repeat("33", 31)+"5840"+hexSIG), ErrMalformed, "vkey"},
		{"short txid", tx("a3"+"00"+"81"+"82"+"581f"+strings.Repeat("11", 31)+"00"+out+fee, "a0"), ErrMalformed, "inputs"},
		{"index over 16 bits", tx("a3"+"00"+"81"+"82"+"5820"+hexT11+"1a00010000"+out+fee, "a0"), ErrMalformed, "index"},
		{"tag other than 258 on inputs", tx("a3"+"00"+"d818"+"81"+"82"+"5820"+hexT11+"00"+out+fee, "a0"), ErrMalformed, "inputs"},
		{"bignum tag on fee", tx("a3"+in+out+"02"+"c2"+"1a00030d40", "a0"), ErrMalformed, ""},
		{"set tag on fee", tx("a3"+in+out+"02"+"d90102"+"1a00030d40", "a0"), ErrMalformed, "fee"},
		{"tag on outputs", tx("a3"+in+"01"+"d90102"+"80"+fee, "a0"), ErrMalformed, "outputs"},
		{"tag on whole tx", "d818" + tx(body3, "a0"), ErrMalformed, ""},
		{"missing fee", tx("a2"+in+out, "a0"), ErrMalformed, "fee"},
		{"missing inputs", tx("a2"+out+fee, "a0"), ErrMalformed, "inputs"},
		{"three elements", "83" + body3 + "a0" + "f6", ErrMalformed, "3 elements"},
		{"body not a map", tx("80", "a0"), ErrMalformed, "body"},
		{"trailing bytes", tx(body3, "a0") + "00", ErrMalformed, ""},
		{"indefinite outputs", tx("a3"+in+"01"+"9f"+"ff"+fee, "a0"), ErrMalformed, ""},
		{"truncated", tx(body3, "a0")[:40], ErrMalformed, ""},
		{"empty", "", ErrMalformed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeTx(unhex(t, tt.raw))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("err = %q does not name %q", err, tt.mention)
			}
		})
	}
}

// BuildTx's bytes are fixed by its inputs: canonical CBOR and deterministic
// ed25519 signatures.
func TestBuildTxGolden(t *testing.T) {
	key := testKey(1)
	in := TxIn{TxID: [32]byte(unhex(t, hexT11)), Index: 3}
	addr := EnterpriseAddress(0, KeyHash(key.Public().(ed25519.PublicKey)))
	tx, err := BuildTx([]TxIn{in}, []TxOut{{Address: addr, Coin: 5_000_000}}, 170_000, ptr(1000), signers(key))
	if err != nil {
		t.Fatal(err)
	}
	wantBody := "a4" +
		"00" + "81" + "82" + "5820" + hexT11 + "03" +
		"01" + "81" + "82" + "581d" + hex.EncodeToString(addr) + "1a004c4b40" +
		"02" + "1a00029810" +
		"03" + "1903e8"
	if got := hex.EncodeToString(tx.BodyBytes()); got != wantBody {
		t.Fatalf("body\n got %s\nwant %s", got, wantBody)
	}
	id := tx.ID()
	vkey := key.Public().(ed25519.PublicKey)
	wantTx := "84" + wantBody +
		"a1" + "00" + "81" + "82" + "5820" + hex.EncodeToString(vkey) + "5840" + hex.EncodeToString(signID(key, id)) +
		"f5" + "f6"
	if got := hex.EncodeToString(tx.Bytes()); got != wantTx {
		t.Fatalf("tx\n got %s\nwant %s", got, wantTx)
	}
}
