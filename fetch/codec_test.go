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
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			got, err := protocol.Encode(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encoding\n got %x\nwant %x", got, want)
			}
			back, err := Spec(testLimits).Decode(want)
			if err != nil {
				t.Fatal(err)
			}
			again, err := protocol.Encode(back)
			if err != nil || !bytes.Equal(again, want) {
				t.Fatalf("decode/encode round trip: %x, %v", again, err)
			}
		})
	}
}

// The Haskell prototype's indefinite-length bitmaps decode to the same
// value, and appendBitmaps writes them byte for byte.
func TestGoldenBitmapsHaskellForm(t *testing.T) {
	indef := unhex(t, goldenBitmapsIndefHex)
	var bm Bitmaps
	if err := bm.UnmarshalCBOR(indef); err != nil {
		t.Fatal(err)
	}
	if !bm.Equal(goldenBitmaps) {
		t.Fatalf("decoded %v", bm)
	}
	if got := appendBitmaps(nil, goldenBitmaps, true); !bytes.Equal(got, indef) {
		t.Fatalf("indefinite form %x, want %x", got, indef)
	}
	if got := appendBitmaps(nil, goldenBitmaps, false); !bytes.Equal(got, unhex(t, goldenBitmapsDefHex)) {
		t.Fatalf("definite form %x", got)
	}
	if want := []int{0, 63, 184, 185, 186, 187, 188, 189, 190, 191}; !slices.Equal(bm.Offsets(), want) {
		t.Fatalf("offsets %v, want %v", bm.Offsets(), want)
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
		{"windows descending", "a2 02 01 01 01"},
		{"window repeated", "a2 01 01 01 01"},
		{"indefinite, descending", "bf 02 01 01 01 ff"},
		{"zero mask", "a1 00 00"},
		{"window over 16 bits", "a1 1a00010000 01"},
		{"byte-string key", "a1 4100 01"},
		{"negative mask", "a1 00 20"},
		{"map mask", "a1 00 a0"},
		{"array, not a map", "80"},
		{"non-minimal window", "a1 1801 01"},
		{"non-minimal mask", "a1 00 1900ff"},
		{"truncated", "a2 00 01"},
		{"no break", "bf 00 01"},
		{"trailing bytes", "a1 00 01 00"},
		{"reserved info", "a1 1c 01"},
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

// Messages the engine must refuse as malformed.
func TestMessagesRejected(t *testing.T) {
	for _, tc := range []struct{ name, hex string }{
		{"txs request for nothing", "83 02" + goldenPointHex + "a0"},
		{"txs request with zero mask", "83 02" + goldenPointHex + "a1 00 00"},
		{"txs reply, count differs", "84 03" + goldenPointHex + "a1 00 1bc000000000000000 81 4101"},
		{"txs reply, tx not bytes", "84 03" + goldenPointHex + "a1 00 1b8000000000000000 81 01"},
		{"body wrapped in bytes", "82 01 43a10000"},
		{"unknown tag", "81 05"},
		{"request without point", "81 00"},
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
}
