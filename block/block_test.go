package block

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func rep(b byte, n int) string { return strings.Repeat(hex.EncodeToString([]byte{b}), n) }

func unhex(t testing.TB, parts ...string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(parts, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fill[T Hash | Bytes32 | Bytes48 | Bytes64 | Bytes80](b byte) T {
	var v T
	fillBytes(&v, b)
	return v
}

func fillBytes(v any, b byte) {
	var s []byte
	switch p := v.(type) {
	case *Hash:
		s = p[:]
	case *Bytes32:
		s = p[:]
	case *Bytes48:
		s = p[:]
	case *Bytes64:
		s = p[:]
	case *Bytes80:
		s = p[:]
	}
	for i := range s {
		s[i] = b
	}
}

func testKey() ed25519.PrivateKey { return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)) }

func TestPointGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		point Point
		hex   string
	}{
		{"origin", Origin, "80"},
		{"small slot", Point{Slot: 5, Hash: fill[Hash](0x11)}, "82" + "05" + "5820" + rep(0x11, 32)},
		{"two-byte slot", Point{Slot: 300, Hash: fill[Hash](0x22)}, "82" + "19012c" + "5820" + rep(0x22, 32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.point)
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(got) != tc.hex {
				t.Fatalf("encode: got %x want %s", got, tc.hex)
			}
			var back Point
			if err := Unmarshal(got, &back); err != nil || back != tc.point {
				t.Fatalf("decode: %v %v", back, err)
			}
		})
	}
	for _, bad := range []string{"81" + "05", "82" + "05" + "5810" + rep(0, 16), "82" + "00" + "5820" + rep(0, 32), "a0"} {
		var p Point
		if err := Unmarshal(unhex(t, bad), &p); err == nil {
			t.Errorf("decoded invalid point %s", bad)
		}
	}
}

func testHeaderBody() HeaderBody {
	return HeaderBody{
		BlockNumber:  1,
		Slot:         5,
		IssuerVKey:   Bytes32(testKey().Public().(ed25519.PublicKey)),
		VRFVKey:      fill[Bytes32](0x33),
		VRF:          VRFResult{Output: fill[Bytes64](0x44), Proof: fill[Bytes80](0x55)},
		BodySize:     42,
		BodyHash:     fill[Hash](0x66),
		Announcement: &Announcement{EbHash: fill[Hash](0x77), EbSize: 1000},
	}
}

func TestHeaderGolden(t *testing.T) {
	hb := testHeaderBody()
	h := NewHeader(hb, testKey())
	issuer := hex.EncodeToString(hb.IssuerVKey[:])
	wantBody := unhex(t,
		"8a",             // header_body: 10 fields
		"01", "05", "f6", // block number, slot, prev = null
		"5820", issuer, "5820", rep(0x33, 32),
		"82", "5840", rep(0x44, 64), "5850", rep(0x55, 80), // vrf_result
		"182a", "5820", rep(0x66, 32), // body size 42, body hash
		"f4",                                  // leios_certified false
		"82", "5820", rep(0x77, 32), "1903e8", // announcement (eb_hash, 1000)
	)
	if !bytes.Equal(h.SignedBytes(), wantBody) {
		t.Fatalf("header body:\n got %x\nwant %x", h.SignedBytes(), wantBody)
	}
	sig := ed25519.Sign(testKey(), wantBody)
	wantHeader := append(append(unhex(t, "82"), wantBody...), append(unhex(t, "5840"), sig...)...)
	if !bytes.Equal(h.Bytes(), wantHeader) {
		t.Fatalf("header:\n got %x\nwant %x", h.Bytes(), wantHeader)
	}
	if h.Hash() != HashBytes(wantHeader) {
		t.Fatal("hash is not Blake2b-256 of the header bytes")
	}
	if err := h.VerifySignature(); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHeader(wantHeader)
	if err != nil {
		t.Fatal(err)
	}
	if back.Hash() != h.Hash() || back.HeaderBody.Announcement.EbSize != 1000 || back.PrevHash != nil {
		t.Fatalf("round trip: %+v", back.HeaderBody)
	}
}

func TestHeaderKeepsOriginalBytes(t *testing.T) {
	// A non-minimal block number (0x1801 instead of 0x01) decodes to the same
	// values, but the hash and the signature are over the bytes as received.
	hb := testHeaderBody()
	canonical := NewHeader(hb, testKey()).SignedBytes()
	odd := append(unhex(t, "8a", "1801"), canonical[2:]...)
	sig := ed25519.Sign(testKey(), odd)
	raw := append(append(unhex(t, "82"), odd...), append(unhex(t, "5840"), sig...)...)
	h, err := DecodeHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	if h.BlockNumber != 1 || h.Hash() != HashBytes(raw) || !bytes.Equal(h.Bytes(), raw) {
		t.Fatal("decoded header does not keep its wire bytes")
	}
	if err := h.VerifySignature(); err != nil {
		t.Fatalf("signature over the wire bytes must verify: %v", err)
	}
}

func TestHeaderBadSignature(t *testing.T) {
	h := NewHeader(testHeaderBody(), testKey())
	raw := append([]byte(nil), h.Bytes()...)
	raw[len(raw)-1] ^= 1
	back, err := DecodeHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.VerifySignature(); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("got %v, want ErrBadSignature", err)
	}
}

func TestBlockGoldenAndBodyCheck(t *testing.T) {
	tx := RawCBOR(unhex(t, "84a0a0f5f6")) // the shape of a transaction; the ledger checks its content
	body := NewBody([]RawCBOR{tx}, nil)
	if got, want := body.Bytes(), unhex(t, "82", "81", "84a0a0f5f6", "f6"); !bytes.Equal(got, want) {
		t.Fatalf("body: got %x want %x", got, want)
	}
	hb := testHeaderBody()
	hb.Announcement = nil
	hb.BodySize, hb.BodyHash = uint64(len(body.Bytes())), body.Hash()
	blk := NewBlock(NewHeader(hb, testKey()), body)
	want := append(append(unhex(t, "82"), blk.Header.Bytes()...), body.Bytes()...)
	if !bytes.Equal(blk.Bytes(), want) {
		t.Fatalf("block: got %x want %x", blk.Bytes(), want)
	}
	back, err := DecodeBlock(blk.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := back.CheckBody(); err != nil {
		t.Fatal(err)
	}
	if back.Hash() != blk.Hash() || len(back.Body.Txs) != 1 || !bytes.Equal(back.Body.Txs[0], tx) {
		t.Fatal("block round trip lost data")
	}
	other := NewBlock(blk.Header, NewBody(nil, nil))
	if err := other.CheckBody(); !errors.Is(err, ErrBodyMismatch) {
		t.Fatalf("got %v, want ErrBodyMismatch", err)
	}
}

func TestVoteAndCertificateGolden(t *testing.T) {
	v := Vote{RbHash: fill[Hash](0x01), VoterSeat: 3, Signature: fill[Bytes48](0x02)}
	got, _ := Marshal(v)
	if want := "83" + "5820" + rep(1, 32) + "03" + "5830" + rep(2, 48); hex.EncodeToString(got) != want {
		t.Fatalf("vote: got %x want %s", got, want)
	}
	var vb Vote
	if err := Unmarshal(got, &vb); err != nil || vb != v {
		t.Fatalf("vote round trip: %v", err)
	}
	if got := PrototypeVoteMessage(v.RbHash); hex.EncodeToString(got) != "5820"+rep(1, 32) {
		t.Fatalf("vote message %x", got)
	}
	// Seats are 16-bit: 65,535 decodes, 65,536 does not.
	for seat, ok := range map[string]bool{"19ffff": true, "1a00010000": false} {
		raw, _ := hex.DecodeString("83" + "5820" + rep(1, 32) + seat + "5830" + rep(2, 48))
		if err := Unmarshal(raw, &vb); (err == nil) != ok {
			t.Fatalf("vote with seat %s: %v", seat, err)
		}
	}

	var c Certificate
	c.AggregateSignature = fill[Bytes48](0x09)
	for _, seat := range []int{0, 2, 9} {
		c.SetSigner(seat)
	}
	got, _ = Marshal(c)
	if want := "82" + "42" + "a040" + "5830" + rep(9, 48); hex.EncodeToString(got) != want {
		t.Fatalf("certificate: got %x want %s", got, want)
	}
	for seat := range 16 {
		if c.HasSigner(seat) != (seat == 0 || seat == 2 || seat == 9) {
			t.Fatalf("seat %d", seat)
		}
	}
}

func ebHex(entries ...string) string { return strings.Join(entries, "") }

func TestEBBody(t *testing.T) {
	h1, h2 := rep(0xaa, 32), rep(0xbb, 32)
	small := EBLimits{MaxBodyBytes: 200, MaxClosureBytes: 300, MaxTxs: 2}
	for _, tc := range []struct {
		name   string
		hex    string
		limits EBLimits
		ok     bool
	}{
		{"two txs", ebHex("a2", "5820", h1, "190100", "5820", h2, "0a"), small, true},
		{"empty", "a0", small, true},
		{"duplicate tx", ebHex("a2", "5820", h1, "01", "5820", h1, "02"), small, false},
		{"non-minimal size", ebHex("a1", "5820", h1, "1801"), small, false},
		{"indefinite map", ebHex("bf", "5820", h1, "01", "ff"), small, false},
		{"short hash", ebHex("a1", "5810", rep(0xaa, 16), "01"), small, false},
		{"trailing bytes", ebHex("a1", "5820", h1, "01", "00"), small, false},
		{"truncated", ebHex("a2", "5820", h1, "01"), small, false},
		{"not a map", "80", small, false},
		{"too many txs", ebHex("a3", "5820", h1, "01", "5820", h2, "01", "5820", rep(0xcc, 32), "01"), small, false},
		{"closure too large", ebHex("a2", "5820", h1, "19012c", "5820", h2, "01"), small, false},
		{"body too large", ebHex("a1", "5820", h1, "01"), EBLimits{MaxBodyBytes: 10, MaxClosureBytes: 300, MaxTxs: 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := unhex(t, tc.hex)
			eb, err := DecodeEBBody(raw, tc.limits)
			if !tc.ok {
				if !errors.Is(err, ErrInvalidEB) {
					t.Fatalf("got %v, want ErrInvalidEB", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if eb.Hash() != HashBytes(raw) || eb.Size() != uint64(len(raw)) || !bytes.Equal(eb.Bytes(), raw) {
				t.Fatal("hash/size are not of the wire bytes")
			}
			again, err := NewEBBody(eb.Txs, tc.limits)
			if err != nil || !bytes.Equal(again.Bytes(), raw) {
				t.Fatalf("re-encoding differs: %x %v", again.Bytes(), err)
			}
		})
	}
	eb, _ := DecodeEBBody(unhex(t, ebHex("a2", "5820", h1, "190100", "5820", h2, "0a")), small)
	if eb.ClosureSize() != 266 || eb.Txs[0].Size != 256 || eb.Txs[1].TxHash != fill[Hash](0xbb) {
		t.Fatalf("entries: %+v", eb.Txs)
	}
	if a := eb.Announcement(); a.EbHash != eb.Hash() || a.EbSize != eb.Size() {
		t.Fatal("announcement")
	}
}

// A full EB: the most txs, of the average size that fills the closure.
func TestEBBodyFullSizeRoundTrip(t *testing.T) {
	txs := make([]EBTx, DefaultEBLimits.MaxTxs)
	for i := range txs {
		txs[i] = EBTx{TxHash: HashBytes([]byte{byte(i), byte(i >> 8)}), Size: uint32(DefaultEBLimits.MaxClosureBytes / DefaultEBLimits.MaxTxs)}
	}
	eb, err := NewEBBody(txs, DefaultEBLimits)
	if err != nil {
		t.Fatal(err)
	}
	if eb.Size() > uint64(DefaultEBLimits.MaxBodyBytes) {
		t.Fatalf("a full EB body is %d bytes", eb.Size())
	}
}
