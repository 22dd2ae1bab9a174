package fetch

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// FuzzDecode: any bytes decode to a LeiosFetch message or fail with a
// violation, and a decoded message's encoding is stable.
func FuzzDecode(f *testing.F) {
	spec := Spec(testLimits)
	eb := blocktest.NewEB(f, 100, 1, 2)
	for _, m := range []protocol.Message{
		&MsgBlockRequest{Point: goldenPoint},
		&MsgBlock{Body: eb.Body.Bytes()},
		&MsgBlockTxsRequest{Point: goldenPoint, Bitmaps: goldenBitmaps},
		&MsgBlockTxs{Point: goldenPoint, Bitmaps: Bitmaps{{Index: 0, Mask: 0xc000000000000000}}, Txs: eb.Txs},
		&MsgDone{},
	} {
		data, err := protocol.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(unhex(f, "83 02"+goldenPointHex+goldenBitmapsIndefHex))
	f.Add(unhex(f, "83 02"+goldenPointHex+"bf 02 01 01 01 ff"))
	f.Add(unhex(f, "83 02"+goldenPointHex+goldenBitmapsDefHex))
	f.Add(unhex(f, "84 03"+goldenPointHex+"bf 00 1b8000000000000000 ff 81 d818 4101"))
	f.Add(unhex(f, "82 01 f6"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := protocoltest.DecodeStable(t, spec, data)
		if m == nil {
			return
		}
		if b, ok := m.(*MsgBlock); ok && !bytes.Contains(data, b.Body) {
			t.Fatal("a decoded body is not the bytes received")
		}
	})
}

// FuzzBitmaps: any bytes decode to valid bitmaps (ascending, no zero mask)
// whose offsets round-trip, or fail with ErrBitmaps.
func FuzzBitmaps(f *testing.F) {
	for _, seed := range []string{
		goldenBitmapsIndefHex, goldenBitmapsDefHex, "a0", "bfff", "bf 02 01 01 01 ff",
		"bf 00 00 ff", "bf 1a00010000 01 ff", "bf 4100 01 ff", "bf 00 01",
	} {
		f.Add(unhex(f, seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var bm Bitmaps
		if err := bm.UnmarshalCBOR(data); err != nil {
			if !errors.Is(err, ErrBitmaps) {
				t.Fatalf("error %v does not wrap ErrBitmaps", err)
			}
			return
		}
		if err := bm.Validate(); err != nil {
			t.Fatalf("decoded invalid bitmaps: %v", err)
		}
		back, err := BitmapsOf(bm.Offsets())
		if err != nil || !back.Equal(bm) {
			t.Fatalf("offsets of %v do not round-trip: %v", bm, err)
		}
		var again Bitmaps
		if err := again.UnmarshalCBOR(appendBitmaps(nil, bm)); err != nil || !again.Equal(bm) {
			t.Fatalf("re-encoding of %v: %v", bm, err)
		}
	})
}

// FuzzDecode2: any bytes decode to a /leios/fetch/2 message or fail with a
// violation, and a decoded message's encoding is stable.
func FuzzDecode2(f *testing.F) {
	for _, data := range protocoltest.Golden(f, "testdata/fetch2.golden") {
		f.Add(data)
	}
	f.Add(unhex(f, "82 04 9f 41 04 ff"))
	f.Add(unhex(f, "83 03 5820"+strings.Repeat("11", 32)+"48 0000000000000001"))
	spec := Spec2(testLimits)
	f.Fuzz(func(t *testing.T, data []byte) {
		m := protocoltest.DecodeStable(t, spec, data)
		if b, ok := m.(*MsgMultiBlock); ok && !bytes.Contains(data, b.Body) {
			t.Fatal("a decoded body is not the bytes received")
		}
	})
}

// FuzzTxBitmap: any bytes decode to a valid tx bitmap whose offsets
// round-trip, or fail with ErrBitmaps.
func FuzzTxBitmap(f *testing.F) {
	for _, seed := range []string{"40", "49 00 8000000000000001", "52 00 01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 01", "48 00", "a0"} {
		f.Add(unhex(f, seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var bm TxBitmap
		if err := bm.UnmarshalCBOR(data); err != nil {
			if !errors.Is(err, ErrBitmaps) {
				t.Fatalf("error %v does not wrap ErrBitmaps", err)
			}
			return
		}
		back, err := txBitmapOf(Bitmaps(bm).Offsets())
		if err != nil || !Bitmaps(back).Equal(Bitmaps(bm)) {
			t.Fatalf("offsets of %v do not round-trip: %v", bm, err)
		}
		enc, err := bm.MarshalCBOR()
		if err != nil || !bytes.Equal(enc, data) {
			t.Fatalf("re-encoding %x of %x: %v", enc, data, err)
		}
	})
}
