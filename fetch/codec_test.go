package fetch

import (
	"bytes"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fill(b byte) (h block.Hash) {
	for i := range h {
		h[i] = b
	}
	return h
}

var (
	goldenPoint    = block.Point{Slot: 42, Hash: fill(0x11)}
	goldenPointHex = "82 182a 5820" + strings.Repeat("11", 32)
	goldenBitmaps  = Bitmaps{{Index: 0, Mask: 0x8000000000000001}, {Index: 2, Mask: 0xff}}
	// The Haskell prototype's form: an indefinite-length map.
	goldenBitmapsIndefHex = "bf 00 1b8000000000000001 02 18ff ff"
	goldenBitmapsDefHex   = "a2 00 1b8000000000000001 02 18ff"
)

// Golden bytes of every message, as the engine sends them.
func TestGoldenMessages(t *testing.T) {
	body := "a1 5820" + strings.Repeat("22", 32) + " 190100" // one tx of 256 bytes
	for _, tc := range []struct {
		name string
		msg  protocol.Message
		hex  string
	}{
		{"block request", &MsgBlockRequest{Point: goldenPoint}, "82 00" + goldenPointHex},
		{"block", &MsgBlock{Body: unhex(t, body)}, "82 01" + body},
		{"block txs request", &MsgBlockTxsRequest{Point: goldenPoint, Bitmaps: goldenBitmaps}, "83 02" + goldenPointHex + goldenBitmapsIndefHex},
		{"block txs", &MsgBlockTxs{Point: goldenPoint, Bitmaps: Bitmaps{{Index: 0, Mask: 0xc000000000000000}}, Txs: [][]byte{{1, 2, 3}, {4}}},
			"84 03" + goldenPointHex + "bf 00 1bc000000000000000 ff 82 43010203 4104"},
		{"done", &MsgDone{}, "81 09"},
	} {
		t.Run(tc.name, func(t *testing.T) { protocoltest.CheckEncoding(t, Spec(testLimits), tc.msg, unhex(t, tc.hex)) })
	}
}

// The Haskell prototype's indefinite-length bitmaps decode, appendBitmaps
// writes them byte for byte, and the definite form, which the Haskell codec
// does not read, is refused.
func TestGoldenBitmapsHaskellForm(t *testing.T) {
	indef := unhex(t, goldenBitmapsIndefHex)
	var bm Bitmaps
	if err := bm.UnmarshalCBOR(indef); err != nil {
		t.Fatal(err)
	}
	if !bm.Equal(goldenBitmaps) {
		t.Fatalf("decoded %v", bm)
	}
	if got := appendBitmaps(nil, goldenBitmaps); !bytes.Equal(got, indef) {
		t.Fatalf("encoded %x, want %x", got, indef)
	}
	if want := []int{0, 63, 184, 185, 186, 187, 188, 189, 190, 191}; !slices.Equal(bm.Offsets(), want) {
		t.Fatalf("offsets %v, want %v", bm.Offsets(), want)
	}
	if err := new(Bitmaps).UnmarshalCBOR(unhex(t, goldenBitmapsDefHex)); !errors.Is(err, ErrBitmaps) {
		t.Fatalf("definite-length bitmaps: %v, want ErrBitmaps", err)
	}
}

// The engine carries the Haskell (indefinite) bitmaps form, and what the
// encoder writes is exactly that form.
func TestIndefiniteBitmapsThroughEngine(t *testing.T) {
	wire := unhex(t, "83 02"+goldenPointHex+goldenBitmapsIndefHex)
	m, err := Spec(testLimits).Decode(wire)
	if err != nil {
		t.Fatalf("engine refuses indefinite bitmaps: %v", err)
	}
	again, err := protocol.Encode(m)
	if err != nil || !bytes.Equal(again, wire) {
		t.Fatalf("re-encoding gives %x, want %x (%v)", again, wire, err)
	}
}

func TestBitmapsOfOffsets(t *testing.T) {
	for _, offsets := range [][]int{
		{}, {0}, {63}, {64}, {0, 1, 2, 63, 64, 127, 128}, seedsInt(0, 13_888), {MaxOffset},
	} {
		bm, err := BitmapsOf(offsets)
		if err != nil {
			t.Fatal(err)
		}
		if err := bm.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := bm.Offsets(); !slices.Equal(got, offsets) || bm.Count() != len(offsets) {
			t.Fatalf("offsets %v → %v → %v", offsets, bm, got)
		}
		var back Bitmaps
		enc, err := bm.MarshalCBOR()
		if err != nil || back.UnmarshalCBOR(enc) != nil || !back.Equal(bm) {
			t.Fatalf("round trip of %v: %x %v", bm, enc, err)
		}
	}
	for _, bad := range [][]int{{1, 1}, {2, 1}, {-1}, {MaxOffset + 1}} {
		if _, err := BitmapsOf(bad); !errors.Is(err, ErrBitmaps) {
			t.Fatalf("BitmapsOf(%v): %v", bad, err)
		}
	}
}

func TestBitmapsRejected(t *testing.T) {
	for _, tc := range []struct{ name, hex string }{
		{"definite length", goldenBitmapsDefHex},
		{"definite length, empty", "a0"},
		{"windows descending", "bf 02 01 01 01 ff"},
		{"window repeated", "bf 01 01 01 01 ff"},
		{"zero mask", "bf 00 00 ff"},
		{"window over 16 bits", "bf 1a00010000 01 ff"},
		{"byte-string key", "bf 4100 01 ff"},
		{"negative mask", "bf 00 20 ff"},
		{"map mask", "bf 00 a0 ff"},
		{"indefinite mask", "bf 00 1f ff"},
		{"array, not a map", "9f ff"},
		{"non-minimal window", "bf 1801 01 ff"},
		{"non-minimal mask", "bf 00 1900ff ff"},
		{"key without a mask", "bf 00 ff"},
		{"no break", "bf 00 01"},
		{"trailing bytes", "bf 00 01 ff 00"},
		{"reserved info", "bf 1c 01 ff"},
		{"empty input", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bm Bitmaps
			if err := bm.UnmarshalCBOR(unhex(t, tc.hex)); !errors.Is(err, ErrBitmaps) {
				t.Fatalf("decoded %v, err %v", bm, err)
			}
		})
	}
}

// TestHaskellVectors: each message as the Haskell prototype's codec writes
// it decodes: every item definite-length but the bitmaps, which are
// indefinite, no tag anywhere.
func TestHaskellVectors(t *testing.T) {
	body := "a2 5820" + strings.Repeat("22", 32) + " 190100 5820" + strings.Repeat("33", 32) + " 1a00010000"
	for _, tc := range []struct {
		name string
		hex  string
		want protocol.Message
	}{
		{"MsgLeiosBlockRequest", "82 00" + goldenPointHex, &MsgBlockRequest{Point: goldenPoint}},
		{"MsgLeiosBlock", "82 01" + body, &MsgBlock{Body: unhex(t, body)}},
		{"MsgLeiosBlockTxsRequest", "83 02" + goldenPointHex + goldenBitmapsIndefHex, &MsgBlockTxsRequest{Point: goldenPoint, Bitmaps: goldenBitmaps}},
		{"MsgLeiosBlockTxs", "84 03" + goldenPointHex + "bf 00 1bc000000000000000 ff 82 43010203 4104",
			&MsgBlockTxs{Point: goldenPoint, Bitmaps: Bitmaps{{Index: 0, Mask: 0xc000000000000000}}, Txs: TxList{{1, 2, 3}, {4}}}},
		{"MsgLeiosBlockTxs, no txs", "84 03" + goldenPointHex + "bf ff 80", &MsgBlockTxs{Point: goldenPoint, Txs: TxList{}}},
		{"MsgDone", "81 09", &MsgDone{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Spec(testLimits).Decode(unhex(t, tc.hex))
			if err != nil {
				t.Fatal(err)
			}
			wantBytes, _ := protocol.Encode(tc.want)
			if gotBytes, _ := protocol.Encode(got); !bytes.Equal(gotBytes, wantBytes) || !bytes.Equal(gotBytes, unhex(t, tc.hex)) {
				t.Fatalf("decoded %#v, want %#v", got, tc.want)
			}
		})
	}
}

// TestRefusedForms: what the Haskell codec does not read is a violation
// that names why: an indefinite length anywhere but the bitmaps, a tag
// anywhere (a tx wrapped in tag 24 included), an item of the wrong type.
func TestRefusedForms(t *testing.T) {
	point, bitmaps := goldenPointHex, "bf 00 1b8000000000000000 ff"
	for _, tc := range []struct {
		name, hex string
		want      error
	}{
		{"indefinite message array", "9f 00" + point + "ff", protocol.ErrIndefiniteLength},
		{"indefinite message array, txs", "9f 03" + point + bitmaps + "81 4101 ff", protocol.ErrIndefiniteLength},
		{"indefinite point", "82 00 9f 182a 5820" + strings.Repeat("11", 32) + "ff", protocol.ErrIndefiniteLength},
		{"indefinite point hash", "82 00 82 182a 5f 5810" + strings.Repeat("11", 16) + "5810" + strings.Repeat("11", 16) + "ff", protocol.ErrIndefiniteLength},
		{"indefinite tx list", "84 03" + point + bitmaps + "9f 4101 ff", protocol.ErrIndefiniteLength},
		{"indefinite tx bytes", "84 03" + point + bitmaps + "81 5f 4101 ff", protocol.ErrIndefiniteLength},
		{"indefinite EB body", "82 01 bf 5820" + strings.Repeat("22", 32) + " 190100 ff", protocol.ErrIndefiniteLength},
		{"tx in tag 24", "84 03" + point + bitmaps + "81 d818 4101", protocol.ErrTagged},
		{"tx list in a tag", "84 03" + point + bitmaps + "d818 81 4101", protocol.ErrTagged},
		{"tagged point", "82 00 d818" + point, protocol.ErrTagged},
		{"tagged EB body", "82 01 d818 a1 5820" + strings.Repeat("22", 32) + " 190100", protocol.ErrTagged},
		{"tagged bitmaps", "83 02" + point + "d818" + goldenBitmapsIndefHex, protocol.ErrTagged},
		{"set-tagged tx list", "84 03" + point + bitmaps + "d90102 81 4101", protocol.ErrTagged},
		{"tx not bytes", "84 03" + point + bitmaps + "81 01", protocol.ErrWrongType},
		{"negative slot", "82 00 82 3b0000000000000001 5820" + strings.Repeat("11", 32), protocol.ErrWrongType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Spec(testLimits).Decode(unhex(t, tc.hex))
			if !errors.Is(err, tc.want) || !errors.Is(err, protocol.ErrMalformed) || !protocol.IsViolation(err) {
				t.Fatalf("decoded %#v, err %v; want %v", m, err, tc.want)
			}
		})
	}
}

// Messages the engine must refuse as malformed.
func TestMessagesRejected(t *testing.T) {
	for _, tc := range []struct{ name, hex string }{
		{"txs request for nothing", "83 02" + goldenPointHex + "bf ff"},
		{"txs request with zero mask", "83 02" + goldenPointHex + "bf 00 00 ff"},
		{"txs request, definite bitmaps", "83 02" + goldenPointHex + goldenBitmapsDefHex},
		{"txs reply, definite bitmaps", "84 03" + goldenPointHex + "a1 00 1b8000000000000000 81 4101"},
		{"txs reply, count differs", "84 03" + goldenPointHex + "bf 00 1bc000000000000000 ff 81 4101"},
		{"body wrapped in bytes", "82 01 43a10000"},
		{"block request of the origin", "82 00 80"},
		{"txs request of the origin", "83 02 80" + goldenBitmapsIndefHex},
		{"txs reply of the origin", "84 03 80 bf 00 1b8000000000000000 ff 81 4101"},
		{"unknown tag", "81 05"},
		{"request without point", "81 00"},
		{"done with a payload", "82 09 00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if m, err := Spec(testLimits).Decode(unhex(t, tc.hex)); !errors.Is(err, protocol.ErrMalformed) {
				t.Fatalf("decoded %#v, err %v", m, err)
			}
		})
	}
}

func TestSpecValidates(t *testing.T) {
	if err := Spec(testLimits).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := Spec2(testLimits).Validate(); err != nil {
		t.Fatal(err)
	}
}

// Each message with an integer, a length or a count longer than it needs
// is refused (ErrNonMinimal), as the Haskell codec writes none.
func TestNonMinimalRefused(t *testing.T) {
	hash := "5820" + strings.Repeat("11", 32)
	body := "a1 5820" + strings.Repeat("22", 32) + " 190100"
	for _, tc := range []struct{ name, hex string }{
		{"block request, slot in three bytes", "82 00 82 19002a" + hash},
		{"block request, tag in two bytes", "82 1800" + goldenPointHex},
		{"block, tx size in five bytes", "82 01 a1 5820" + strings.Repeat("22", 32) + " 1a00000100"},
		{"block, array in two bytes", "98 02 01" + body},
		{"block txs request, point array in two bytes", "83 02 9802 182a" + hash + goldenBitmapsIndefHex},
		{"block txs, tx length in two bytes", "84 03" + goldenPointHex + "bf 00 1b8000000000000000 ff 81 5801 04"},
		{"block txs, tx count in two bytes", "84 03" + goldenPointHex + "bf 00 1b8000000000000000 ff 9801 4104"},
		{"done, tag in two bytes", "81 1809"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Spec(testLimits).Decode(unhex(t, tc.hex))
			if !errors.Is(err, protocol.ErrNonMinimal) || !protocol.IsViolation(err) {
				t.Fatalf("decoded %#v, err %v; want ErrNonMinimal", m, err)
			}
		})
	}
}
