package ledger

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// txWithAux is a tx (one input, one output, no witnesses) carrying the
// auxiliary data aux (hex), its hash in the body's key 7.
func txWithAux(t testing.TB, aux string) string { return txWithAuxOf(unhex(t, aux)) }

func txWithAuxOf(aux []byte) string {
	h := AuxDataHash(aux)
	return "84" + "a4" +
		"00" + "81" + "82" + "5820" + hexT11 + "00" +
		"01" + "81" + "82" + hexEnt + "1a000f4240" +
		"02" + "1a00030d40" +
		"07" + "5820" + hex.EncodeToString(h[:]) +
		"a0" + "f5" + hex.EncodeToString(aux)
}

// textOf is the hex of a text string of n bytes; bytesOf of a byte string.
func textOf(n int) string  { return cborHeadHex(3, n) + strings.Repeat("61", n) }
func bytesOf(n int) string { return cborHeadHex(2, n) + strings.Repeat("ab", n) }

func cborHeadHex(major byte, n int) string {
	switch {
	case n < 24:
		return hex.EncodeToString([]byte{major<<5 | byte(n)})
	case n < 256:
		return hex.EncodeToString([]byte{major<<5 | 24, byte(n)})
	default:
		return hex.EncodeToString([]byte{major<<5 | 25, byte(n >> 8), byte(n)})
	}
}

// nested is a metadatum of depth arrays around 0.
func nested(depth int) string { return strings.Repeat("81", depth) + "00" }

// TestDecodeTxMetadata: each form of auxiliary data the ledger takes is
// accepted with its hash in key 7, kept as it came (a non-canonical
// encoding included), and the tx's hash and id are over the wire bytes.
func TestDecodeTxMetadata(t *testing.T) {
	tests := []struct{ name, aux string }{
		{"Shelley map, CIP-20 message", "a1" + "1902a2" + "a1" + "636d7367" + "82" + textOf(5) + textOf(64)},
		{"every kind of metadatum", "a2" + "00" + "a3" + "20" + bytesOf(64) + "8100" + "a0" + "3b" + strings.Repeat("ff", 8) + "01" + "1bffffffffffffffff" + "80"},
		{"duplicate keys inside a metadatum", "a1" + "01" + "a2" + "01" + "02" + "01" + "03"},
		{"empty metadata", "a0"},
		{"nested 16 deep", "a1" + "00" + nested(16)},
		{"non-canonical lengths", "a1" + "1800" + "7800" + ""},
		{"Allegra–Mary form, no scripts", "82" + "a1" + "00" + textOf(3) + "80"},
		{"Alonzo form", "d90103" + "a1" + "00" + "a1" + "1902a2" + bytesOf(10)},
		{"Alonzo form without metadata", "d90103" + "a0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := unhex(t, txWithAux(t, tt.aux))
			tx, err := DecodeTx(raw)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(tx.AuxData(), unhex(t, tt.aux)) {
				t.Fatalf("AuxData = %x, want %s", tx.AuxData(), tt.aux)
			}
			if tx.Hash() != hash256(raw) || tx.ID() != hash256(tx.BodyBytes()) || tx.Size() != len(raw) {
				t.Fatal("hash, id or size are not of the wire bytes")
			}
		})
	}
	plain, err := DecodeTx(unhex(t, "84"+"a3"+"00"+"81"+"82"+"5820"+hexT11+"00"+"01"+"80"+"02"+"00"+"a0"+"f5f6"))
	if err != nil || plain.AuxData() != nil {
		t.Fatalf("a tx without auxiliary data: %v, AuxData %x", err, plain.AuxData())
	}
}

// TestDecodeTxMetadataRejects: auxiliary data that breaks a rule, or is
// not metadata, is refused with the rule, naming what is wrong.
func TestDecodeTxMetadataRejects(t *testing.T) {
	body := "00" + "81" + "82" + "5820" + hexT11 + "00" + "01" + "81" + "82" + hexEnt + "1a000f4240" + "02" + "1a00030d40"
	aux := "a1" + "1902a2" + textOf(3)
	h := AuxDataHash(unhex(t, aux))
	other := AuxDataHash(unhex(t, "a0"))
	tests := []struct {
		name, raw string
		want      error
		mention   string
	}{
		{"hash without aux data", "84" + "a4" + body + "07" + "5820" + hex.EncodeToString(h[:]) + "a0" + "f5" + "f6", ErrAuxDataMissing, "the auxiliary data null"},
		{"aux data without hash", "84" + "a3" + body + "a0" + "f5" + aux, ErrAuxDataHashMissing, "auxiliary data of 8 bytes"},
		{"hash of other data", "84" + "a4" + body + "07" + "5820" + hex.EncodeToString(other[:]) + "a0" + "f5" + aux, ErrAuxDataHashMismatch, "8 bytes hash to"},
		{"hash of a re-encoding", "84" + "a4" + body + "07" + "5820" + hex.EncodeToString(h[:]) + "a0" + "f5" + "a1" + "1902a2" + "7803616161", ErrAuxDataHashMismatch, ""},
		{"hash not 32 bytes", "84" + "a4" + body + "07" + "581f" + strings.Repeat("11", 31) + "a0" + "f5" + aux, ErrMalformed, "auxiliary data hash"},
		{"hash not bytes", "84" + "a4" + body + "07" + "00" + "a0" + "f5" + aux, ErrMalformed, "auxiliary data hash is not a byte string"},
		{"bytes over 64", txWithAux(t, "a1"+"00"+bytesOf(65)), ErrMetadataInvalid, "bytes of 65 bytes, at most 64"},
		{"text over 64", txWithAux(t, "a1"+"1902a2"+"a1"+"636d7367"+"81"+textOf(65)), ErrMetadataInvalid, "metadata label 674: ledger: metadata invalid"},
		{"text over 64 as a map key", txWithAux(t, "a1"+"00"+"a1"+textOf(100)+"00"), ErrMetadataInvalid, "text of 100 bytes"},
		{"nested too deep", txWithAux(t, "a1"+"00"+nested(17)), ErrMetadataInvalid, "nested deeper than 16"},
		{"nested too deep in maps", txWithAux(t, "a1"+"00"+strings.Repeat("a100", 17)+"00"), ErrMetadataInvalid, "nested deeper than 16"},
		{"nested beyond the decoder's bound", txWithAux(t, "a1"+"00"+nested(40)), ErrMalformed, ""},
		{"native script, Alonzo form", txWithAux(t, "d90103"+"a1"+"01"+"81"+"8200"+"581c"+hexA22), ErrUnsupported, "native scripts in auxiliary data (key 1)"},
		{"Plutus V1 script", txWithAux(t, "d90103"+"a1"+"02"+"81"+"4100"), ErrUnsupported, "Plutus V1 scripts"},
		{"Plutus V2 script", txWithAux(t, "d90103"+"a2"+"00"+"a0"+"03"+"81"+"4100"), ErrUnsupported, "Plutus V2 scripts"},
		{"Plutus V3 script", txWithAux(t, "d90103"+"a1"+"04"+"80"), ErrUnsupported, "Plutus V3 scripts"},
		{"native script, Allegra–Mary form", txWithAux(t, "82"+"a0"+"81"+"8200"+"581c"+hexA22), ErrUnsupported, "native scripts in auxiliary data"},
		{"unknown Alonzo key", txWithAux(t, "d90103"+"a1"+"05"+"80"), ErrMalformed, "unknown auxiliary data key 5"},
		{"other tag", txWithAux(t, "d818"+"a0"), ErrMalformed, "neither metadata nor a tag 259 map"},
		{"tag in a metadatum", txWithAux(t, "a1"+"00"+"c2"+"4101"), ErrMalformed, "tag 2"},
		{"float metadatum", txWithAux(t, "a1"+"00"+"f93c00"), ErrMalformed, "float"},
		{"null metadatum", txWithAux(t, "a1"+"00"+"f6"), ErrMalformed, "simple value"},
		{"text label", txWithAux(t, "a1"+"6161"+"00"), ErrMalformed, "label is not an unsigned integer"},
		{"negative label", txWithAux(t, "a1"+"20"+"00"), ErrMalformed, "label is not an unsigned integer"},
		{"label twice", txWithAux(t, "a2"+"01"+"00"+"01"+"01"), ErrMalformed, "label 1 twice"},
		{"text not UTF-8", txWithAux(t, "a1"+"00"+"62c328"), ErrMalformed, "UTF-8"},
		{"indefinite-length metadatum", txWithAux(t, "a1"+"00"+"9f00ff"), ErrMalformed, ""},
		{"Allegra–Mary form of 3", txWithAux(t, "83"+"a0"+"80"+"80"), ErrMalformed, "array of 3 elements"},
		{"integer instead of metadata", txWithAux(t, "01"), ErrMalformed, "neither metadata"},
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
			if rule, ok := RuleOf(err); !ok || rule.Err() != tt.want || rule.Class() != Stateless {
				t.Fatalf("RuleOf = %v %v, want the stateless rule of %v", rule.Code(), ok, tt.want)
			}
		})
	}
}

// TestBuildWithMetadata: a payment built with metadata is balanced for its
// size, carries the hash of its auxiliary data, and passes every rule.
func TestBuildWithMetadata(t *testing.T) {
	p := DefaultParams()
	key := testKey(3)
	aux, err := EncodeMetadata(map[uint64]any{674: map[string]any{"msg": []any{strings.Repeat("x", 64), "hello"}}, 1: []byte{1, 2}, 2: -5})
	if err != nil {
		t.Fatal(err)
	}
	in := TxIn{TxID: [32]byte{9}, Index: 0}
	utxo := MapUTxO{in: {Address: addrOf(key), Coin: 10_000_000}}
	body, err := TxBody{Inputs: []TxIn{in}, AuxData: aux}.Balance(p, 10_000_000, addrOf(key), 1)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := body.Build(signers(key))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tx.AuxData(), aux) || !bytes.HasSuffix(tx.Bytes(), aux) {
		t.Fatalf("AuxData %x, want %x at the tx's end", tx.AuxData(), aux)
	}
	h := AuxDataHash(aux)
	if !bytes.Contains(tx.BodyBytes(), append([]byte{0x07, 0x58, 0x20}, h[:]...)) {
		t.Fatal("the body does not carry the auxiliary data hash in key 7")
	}
	if size, err := body.SizeWith(1); err != nil || size != tx.Size() {
		t.Fatalf("SizeWith = %d, %v; the tx is %d bytes", size, err, tx.Size())
	}
	if tx.Fee != p.MinFee(tx.Size()) {
		t.Fatalf("fee %d, want the minimum %d for %d bytes", tx.Fee, p.MinFee(tx.Size()), tx.Size())
	}
	if _, err := Apply(p, utxo, 0, tx); err != nil {
		t.Fatal(err)
	}

	var deep any = []any{}
	for range maxMetadatumDepth {
		deep = []any{deep}
	}
	for _, bad := range []map[uint64]any{
		{0: strings.Repeat("x", 65)},
		{0: make([]byte, 65)},
		{0: 1.5},
		{0: deep},
	} {
		if _, err := EncodeMetadata(bad); err == nil {
			t.Errorf("EncodeMetadata(%v) accepted", bad)
		}
	}
}

// metadatumModel is a drawn metadatum: its Go value for EncodeMetadata, the
// longest bytes or text in it and how deep its arrays and maps nest.
type metadatumModel struct {
	value   any
	longest int
	deepest int
}

func drawMetadatum(t *rapid.T, depth int) metadatumModel {
	kind := rapid.IntRange(0, 4).Draw(t, "kind")
	if depth >= 20 {
		kind = 0
	}
	switch kind {
	case 0:
		return metadatumModel{value: rapid.Int64().Draw(t, "int")}
	case 1:
		n := rapid.IntRange(0, 70).Draw(t, "bytes")
		return metadatumModel{value: make([]byte, n), longest: n}
	case 2:
		n := rapid.IntRange(0, 70).Draw(t, "text")
		return metadatumModel{value: strings.Repeat("é", n/2) + strings.Repeat("a", n%2), longest: n}
	default:
		m := metadatumModel{deepest: 1}
		items := make([]any, rapid.IntRange(0, 2).Draw(t, "items"))
		for i := range items {
			item := drawMetadatum(t, depth+1)
			items[i] = item.value
			m.longest = max(m.longest, item.longest)
			m.deepest = max(m.deepest, item.deepest+1)
		}
		m.value = items
		return m
	}
}

// TestMetadataRulesProperty: drawn metadata is accepted exactly when no
// bytes or text is over 64 bytes and no metadatum nests deeper than 16,
// and once accepted its tx decodes with the same auxiliary data bytes.
func TestMetadataRulesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := drawMetadatum(t, 0)
		label := rapid.Uint64().Draw(t, "label")
		aux, err := EncodeMetadata(map[uint64]any{label: m.value})
		valid := m.longest <= maxMetadatumBytes && m.deepest <= maxMetadatumDepth
		if valid != (err == nil) {
			t.Fatalf("longest %d, deepest %d: EncodeMetadata err = %v", m.longest, m.deepest, err)
		}
		if !valid {
			if !errors.Is(err, ErrMetadataInvalid) {
				t.Fatalf("err = %v, want ErrMetadataInvalid", err)
			}
			return
		}
		raw, err := hex.DecodeString(txWithAuxOf(aux))
		if err != nil {
			t.Fatal(err)
		}
		tx, err := DecodeTx(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tx.AuxData(), aux) {
			t.Fatal("auxiliary data changed through decoding")
		}
	})
}
