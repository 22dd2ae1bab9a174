package block

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// golden reads a file of "name: hex" lines (spaces in the hex ignored,
// blank lines and ; comments skipped).
func golden(t *testing.T, path string) map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]byte)
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, ";") {
			continue
		}
		name, text, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("%s: line %q is not name: hex", path, line)
		}
		b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(text), " ", ""))
		if err != nil {
			t.Fatalf("%s: %s: %v", path, name, err)
		}
		out[name] = b
	}
	return out
}

// shapesHeaderBody is the header body of testdata/leios-shapes.golden.
func shapesHeaderBody(enc Encoding, announcing, certified bool) HeaderBody {
	prev := fill[Hash](0x11)
	hb := HeaderBody{
		BlockNumber: 1, Slot: 5, PrevHash: &prev,
		IssuerVKey: fill[Bytes32](0x22), VRFVKey: fill[Bytes32](0x33),
		VRF:      VRFResult{Output: fill[Bytes64](0x44), Proof: fill[Bytes80](0x55)},
		BodySize: 42, BodyHash: fill[Hash](0x66),
		LeiosCertified: certified, Encoding: enc,
	}
	if announcing {
		hb.Announcement = &Announcement{EbHash: fill[Hash](0x77), EbSize: 1000}
	}
	return hb
}

// The header bodies, EB bodies and certificates of both encodings encode
// to the vectors written from the CDDL in testdata/leios-shapes.golden,
// and each vector decodes to its value, which encodes to it again.
func TestLeiosShapesGolden(t *testing.T) {
	vectors := golden(t, "testdata/leios-shapes.golden")
	ebTxs := []EBTx{{TxHash: fill[Hash](0xaa), Size: 256}, {TxHash: fill[Hash](0xbb), Size: 10}}
	cert := func(enc Encoding) *Certificate {
		c := &Certificate{Signers: []byte{0xa0, 0x40}, AggregateSignature: fill[Bytes48](0x09), Encoding: enc}
		if enc == EncodingCIP {
			c.Slot, c.EbHash = 5, fill[Hash](0x77)
		}
		return c
	}
	type check struct {
		encode func() []byte
		decode func([]byte) (any, []byte, error) // the value and its encoding again
		want   any
	}
	headerBody := func(hb HeaderBody) check {
		return check{
			encode: func() []byte { return encodeHeaderBody(hb) },
			decode: func(b []byte) (any, []byte, error) {
				back, err := decodeHeaderBody(b)
				return back, encodeHeaderBody(back), err
			},
			want: hb,
		}
	}
	ebBody := func(txs []EBTx, enc Encoding) check {
		limits := DefaultEBLimits
		limits.Encoding = enc
		return check{
			encode: func() []byte {
				eb, err := NewEBBody(txs, limits)
				if err != nil {
					t.Fatal(err)
				}
				return eb.Bytes()
			},
			decode: func(b []byte) (any, []byte, error) {
				eb, err := DecodeEBBody(b, limits)
				if err != nil {
					return nil, nil, err
				}
				again, err := NewEBBody(eb.Txs, limits)
				if err != nil {
					return nil, nil, err
				}
				return eb.Txs, again.Bytes(), nil
			},
			want: txs,
		}
	}
	certificate := func(c *Certificate) check {
		return check{
			encode: func() []byte { b, _ := Marshal(c); return b },
			decode: func(b []byte) (any, []byte, error) {
				var back Certificate
				if err := Unmarshal(b, &back); err != nil {
					return nil, nil, err
				}
				again, err := Marshal(&back)
				return &back, again, err
			},
			want: c,
		}
	}
	checks := map[string]check{
		"cip header body":                           headerBody(shapesHeaderBody(EncodingCIP, false, false)),
		"cip header body, certified":                headerBody(shapesHeaderBody(EncodingCIP, false, true)),
		"cip header body, announcing":               headerBody(shapesHeaderBody(EncodingCIP, true, false)),
		"cip header body, announcing and certified": headerBody(shapesHeaderBody(EncodingCIP, true, true)),
		"prototype header body, announcing":         headerBody(shapesHeaderBody(EncodingPrototype, true, false)),
		"prototype header body, certified":          headerBody(shapesHeaderBody(EncodingPrototype, false, true)),
		"cip EB body":                               ebBody(ebTxs, EncodingCIP),
		"cip EB body, empty":                        ebBody([]EBTx{}, EncodingCIP),
		"prototype EB body":                         ebBody(ebTxs, EncodingPrototype),
		"cip certificate":                           certificate(cert(EncodingCIP)),
		"prototype certificate":                     certificate(cert(EncodingPrototype)),
	}
	if len(vectors) != len(checks) {
		t.Fatalf("%d vectors for %d values", len(vectors), len(checks))
	}
	for name, c := range checks {
		t.Run(name, func(t *testing.T) {
			want, ok := vectors[name]
			if !ok {
				t.Fatal("no golden vector")
			}
			if got := c.encode(); !bytes.Equal(got, want) {
				t.Fatalf("encoding\n got %x\nwant %x", got, want)
			}
			back, again, err := c.decode(want)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, c.want) {
				t.Fatalf("decoded %+v, want %+v", back, c.want)
			}
			if !bytes.Equal(again, want) {
				t.Fatalf("re-encoded %x", again)
			}
		})
	}
}

// What neither encoding's CDDL allows, or what this node's one encoding of
// a value rules out (a certified_eb of false, which it omits), is refused.
func TestLeiosShapesRefused(t *testing.T) {
	vectors := golden(t, "testdata/leios-shapes.golden")
	cip := hex.EncodeToString(vectors["cip header body"])
	common := cip[2:] // the eight fields after the array head
	ann := "5820" + rep(0x77, 32) + "1903e8"
	for name, body := range map[string]string{
		"seven fields":                   "87" + common[:len(common)-68],
		"twelve fields":                  "8c" + common + ann + "f5" + "f5",
		"certified_eb false alone":       "89" + common + "f4",
		"certified_eb false after":       "8b" + common + ann + "f4",
		"certified_eb not a bool":        "89" + common + "01",
		"an announcement without a size": "89" + common + "5820" + rep(0x77, 32),
		"an announced size over 32 bits": "8a" + common + "5820" + rep(0x77, 32) + "1b0000000100000000",
		"a short announced hash":         "8a" + common + "5810" + rep(0x77, 16) + "1903e8",
		"the two shapes mixed":           "8b" + common + "f4" + ann,
	} {
		t.Run("header body: "+name, func(t *testing.T) {
			if _, err := decodeHeaderBody(unhex(t, body)); err == nil {
				t.Fatal("decoded")
			}
		})
	}
	cipLimits := DefaultEBLimits
	cipLimits.Encoding = EncodingCIP
	for name, body := range map[string]string{
		"the bare map":           "a1 5820" + rep(0xaa, 32) + "01",
		"two elements":           "82 a0 a0",
		"an indefinite array":    "9f a0 ff",
		"a tx size over 16 bits": "81 a1 5820" + rep(0xaa, 32) + "1a00010000",
		"trailing bytes":         "81 a0 00",
	} {
		t.Run("cip EB body: "+name, func(t *testing.T) {
			if _, err := DecodeEBBody(unhex(t, strings.ReplaceAll(body, " ", "")), cipLimits); !errors.Is(err, ErrInvalidEB) {
				t.Fatalf("got %v, want ErrInvalidEB", err)
			}
		})
	}
	protoLimits := DefaultEBLimits
	protoLimits.Encoding = EncodingPrototype
	if _, err := DecodeEBBody(vectors["cip EB body"], protoLimits); !errors.Is(err, ErrInvalidEB) {
		t.Fatalf("prototype limits took the CIP's EB body: %v", err)
	}
	sig := "5830" + rep(0x09, 48)
	for name, c := range map[string]string{
		"three fields": "83 05 42a040" + sig,
		"five fields":  "85 05 5820" + rep(0x77, 32) + "42a040" + sig + "00",
		"no slot":      "84 5820" + rep(0x77, 32) + "5820" + rep(0x77, 32) + "42a040" + sig,
	} {
		t.Run("certificate: "+name, func(t *testing.T) {
			var back Certificate
			if err := Unmarshal(unhex(t, strings.ReplaceAll(c, " ", "")), &back); err == nil {
				t.Fatal("decoded")
			}
		})
	}
}

// A header in either encoding decodes with its encoding recorded, keeps
// its bytes, and verifies.
func TestHeaderEncodingsRoundTrip(t *testing.T) {
	for _, enc := range []Encoding{EncodingPrototype, EncodingCIP} {
		for _, announcing := range []bool{false, true} {
			for _, certified := range []bool{false, true} {
				hb := testHeaderBody()
				hb.Encoding, hb.LeiosCertified = enc, certified
				if !announcing {
					hb.Announcement = nil
				}
				h := NewHeader(hb, testKey())
				back, err := DecodeHeader(h.Bytes())
				if err != nil {
					t.Fatalf("%s: %v", enc, err)
				}
				if !reflect.DeepEqual(back.HeaderBody, hb) || back.Hash() != h.Hash() {
					t.Fatalf("%s: round trip %+v, want %+v", enc, back.HeaderBody, hb)
				}
				if err := back.VerifySignature(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
