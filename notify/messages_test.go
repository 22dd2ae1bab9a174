package notify_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/notify"
)

func rep(b byte, n int) string { return strings.Repeat(hex.EncodeToString([]byte{b}), n) }

func fillHash(b byte) (h block.Hash) {
	for i := range h {
		h[i] = b
	}
	return h
}

func fillSig(b byte) (s block.Bytes48) {
	for i := range s {
		s[i] = b
	}
	return s
}

// TestGoldenBytes pins every message's encoding to the Haskell
// leios-prototype codec: `[tag, payload...]`, definite lengths, minimal
// integers, the point as `[slot, bytes32]`, the block offer's size as a
// Word32 (any minimal uint up to 2^32-1), the header as its own bytes.
func TestGoldenBytes(t *testing.T) {
	h := newTestNet(t, 1).header(42, 0, &block.Announcement{EbHash: fillHash(0x77), EbSize: 1234}, 0)
	for _, tc := range []struct {
		name string
		msg  protocol.Message
		want string
	}{
		{"request next", &notify.MsgRequestNext{}, "8100"},
		{"done", &notify.MsgDone{}, "8105"},
		{"block announcement", &notify.MsgBlockAnnouncement{Header: h}, "8201" + hex.EncodeToString(h.Bytes())},
		{
			"block offer",
			&notify.MsgBlockOffer{Point: block.Point{Slot: 1234, Hash: fillHash(0x11)}, EbSize: 500_000},
			"8302" + "82" + "1904d2" + "5820" + rep(0x11, 32) + "1a0007a120",
		},
		{
			"block offer, small size",
			&notify.MsgBlockOffer{Point: block.Point{Slot: 7, Hash: fillHash(0x12)}, EbSize: 23},
			"8302" + "82" + "07" + "5820" + rep(0x12, 32) + "17",
		},
		{
			"block offer, largest Word32",
			&notify.MsgBlockOffer{Point: block.Point{Slot: 1 << 32, Hash: fillHash(0x13)}, EbSize: 1<<32 - 1},
			"8302" + "82" + "1b0000000100000000" + "5820" + rep(0x13, 32) + "1affffffff",
		},
		{
			"block txs offer",
			&notify.MsgBlockTxsOffer{Point: block.Point{Slot: 7, Hash: fillHash(0x22)}},
			"8203" + "82" + "07" + "5820" + rep(0x22, 32),
		},
		{
			"votes",
			&notify.MsgVotes{Votes: []block.Vote{
				{RbHash: fillHash(0x33), VoterSeat: 5, Signature: fillSig(0x44)},
				{RbHash: fillHash(0x55), VoterSeat: 300, Signature: fillSig(0x66)},
			}},
			"8204" + "82" +
				"83" + "5820" + rep(0x33, 32) + "05" + "5830" + rep(0x44, 48) +
				"83" + "5820" + rep(0x55, 32) + "19012c" + "5830" + rep(0x66, 48),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := hex.DecodeString(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			protocoltest.CheckEncoding(t, notify.Spec(), tc.msg, want)
		})
	}
}

// TestDecodeRejects: malformed messages are ErrMalformed violations.
func TestDecodeRejects(t *testing.T) {
	point := "82" + "07" + "5820" + rep(0x22, 32)
	vote := "83" + "5820" + rep(0x33, 32) + "05" + "5830" + rep(0x44, 48)
	for _, tc := range []struct{ name, hex string }{
		{"unknown tag", "8106"},
		{"request next with a payload", "820000"},
		{"announcement without a header", "8201f6"},
		{"announcement with a non-header", "820143010203"},
		{"block offer of the origin", "830280" + "05"},
		{"block offer without a size", "8202" + point},
		{"block offer size over Word32", "8302" + point + "1b0000000100000000"},
		{"block offer negative size", "8302" + point + "20"},
		{"block offer short hash", "8302" + "82075801aa" + "05"},
		{"block txs offer of the origin", "820380"},
		{"block txs offer with a size", "8303" + point + "05"},
		{"empty vote batch", "820480"},
		{"vote with a short signature", "820481" + "83" + "5820" + rep(0x33, 32) + "05" + "5801aa"},
		{"votes not an array", "8204" + vote},
		{"indefinite-length message", "9f00ff"},
		{"trailing bytes", "810000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := hex.DecodeString(tc.hex)
			if err != nil {
				t.Fatal(err)
			}
			m, err := notify.Spec().Decode(data)
			if !errors.Is(err, protocol.ErrMalformed) {
				t.Fatalf("decoded %#v, err %v; want ErrMalformed", m, err)
			}
		})
	}
}

func TestVoteBatchLimit(t *testing.T) {
	votes := make([]block.Vote, notify.MaxVotesPerMessage+1)
	for i := range votes {
		votes[i] = block.Vote{VoterSeat: math.MaxUint16, Signature: fillSig(0xff)}
	}
	full, err := protocol.Encode(&notify.MsgVotes{Votes: votes[:notify.MaxVotesPerMessage]})
	if err != nil {
		t.Fatal(err)
	}
	if len(full) > 65_535 {
		t.Fatalf("a full batch of the largest votes is %d bytes, over the state's limit", len(full))
	}
	over, err := protocol.Encode(&notify.MsgVotes{Votes: votes})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := notify.Spec().Decode(over); !errors.Is(err, protocol.ErrMalformed) {
		t.Fatalf("a batch over MaxVotesPerMessage decoded: %v", err)
	}
}

func TestSpecValidates(t *testing.T) {
	spec := notify.Spec()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if spec.ID() != "/leios/notify/1" {
		t.Fatalf("protocol ID %s", spec.ID())
	}
	if spec.MaxPipelined+1 != notify.MaxInFlight {
		t.Fatalf("MaxPipelined %d allows %d requests in flight, want %d", spec.MaxPipelined, spec.MaxPipelined+1, notify.MaxInFlight)
	}
}

// TestRefusedForms: what the Haskell LeiosNotify codec does not read is a
// violation that names why: an indefinite length anywhere (it has none), a
// tag anywhere, a vote seat beyond 16 bits or a size beyond 32.
func TestRefusedForms(t *testing.T) {
	hash := "5820" + rep(0x22, 32)
	point := "82" + "07" + hash
	sig := "5830" + rep(0x44, 48)
	vote := func(seat string) string { return "83" + "5820" + rep(0x33, 32) + seat + sig }
	for _, tc := range []struct {
		name, hex string
		want      error
	}{
		{"indefinite message array", "9f 03" + point + "ff", protocol.ErrIndefiniteLength},
		{"indefinite point", "8203 9f 07" + hash + "ff", protocol.ErrIndefiniteLength},
		{"indefinite point hash", "8203 82 07 5f 5810" + rep(0x22, 16) + "5810" + rep(0x22, 16) + "ff", protocol.ErrIndefiniteLength},
		{"indefinite vote list", "8204 9f" + vote("05") + "ff", protocol.ErrIndefiniteLength},
		{"indefinite vote", "8204 81 9f" + "5820" + rep(0x33, 32) + "05" + sig + "ff", protocol.ErrIndefiniteLength},
		{"indefinite signature", "8204 81 83" + "5820" + rep(0x33, 32) + "05" + "5f 5818" + rep(0x44, 24) + "5818" + rep(0x44, 24) + "ff", protocol.ErrIndefiniteLength},
		{"tagged point", "8203 d818" + point, protocol.ErrTagged},
		{"tagged hash", "8203 82 07 d818" + hash, protocol.ErrTagged},
		{"tagged offer size", "8302" + point + "c1 05", protocol.ErrTagged},
		{"tagged vote list", "8204 d90102 81" + vote("05"), protocol.ErrTagged},
		{"header in tag 24", "8201 d818 43010203", protocol.ErrTagged},
		{"seat beyond 16 bits", "8204 81" + vote("1a00010000"), protocol.ErrWrongType},
		{"seat of 64 bits", "8204 81" + vote("1b0000000100000000"), protocol.ErrWrongType},
		{"offer size beyond 32 bits", "8302" + point + "1b0000000100000000", protocol.ErrWrongType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := hex.DecodeString(strings.ReplaceAll(tc.hex, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			m, err := notify.Spec().Decode(data)
			if !errors.Is(err, tc.want) || !errors.Is(err, protocol.ErrMalformed) || !protocol.IsViolation(err) {
				t.Fatalf("decoded %#v, err %v; want %v", m, err, tc.want)
			}
		})
	}
}

// TestSeatBounds: the largest 16-bit seat decodes, in every integer width
// the Haskell codec's decodeWord16 reads minimal.
func TestSeatBounds(t *testing.T) {
	for _, tc := range []struct {
		seat string
		want uint16
	}{{"00", 0}, {"17", 23}, {"1818", 24}, {"18ff", 255}, {"190100", 256}, {"19ffff", 65535}} {
		data, _ := hex.DecodeString("8204" + "81" + "83" + "5820" + rep(0x33, 32) + tc.seat + "5830" + rep(0x44, 48))
		m, err := notify.Spec().Decode(data)
		if err != nil {
			t.Fatalf("seat %s: %v", tc.seat, err)
		}
		if got := m.(*notify.MsgVotes).Votes[0].VoterSeat; got != tc.want {
			t.Fatalf("seat %s decoded as %d, want %d", tc.seat, got, tc.want)
		}
	}
}

// TestNonMinimalRefused: every message with an integer, a length or a count
// longer than it needs — the message array, the tag, a field — is refused
// (ErrNonMinimal), as the Haskell codec writes none; the announced header
// is the issuer's bytes, left to the header's codec.
func TestNonMinimalRefused(t *testing.T) {
	h := newTestNet(t, 1).header(42, 0, &block.Announcement{EbHash: fillHash(0x77), EbSize: 1234}, 0)
	header := hex.EncodeToString(h.Bytes())
	hash := "5820" + rep(0x22, 32)
	sig := "5830" + rep(0x44, 48)
	vote := "83" + "5820" + rep(0x33, 32) + "05" + sig
	for _, tc := range []struct{ name, hex string }{
		{"request next, tag in two bytes", "81 1800"},
		{"request next, array in two bytes", "98 01 00"},
		{"announcement, tag in two bytes", "82 1801" + header},
		{"announcement, array in two bytes", "98 02 01" + header},
		{"block offer, slot in two bytes", "83 02 82 1807" + hash + "05"},
		{"block offer, size in three bytes", "83 02 82 07" + hash + "190005"},
		{"block offer, hash length in three bytes", "83 02 82 07 5900 20" + rep(0x22, 32) + "05"},
		{"block txs offer, point array in two bytes", "82 03 98 02 07" + hash},
		{"votes, seat in two bytes", "82 04 81 83 5820" + rep(0x33, 32) + "1805" + sig},
		{"votes, list count in two bytes", "82 04 98 01" + vote},
		{"votes, signature length in three bytes", "82 04 81 83 5820" + rep(0x33, 32) + "05 590030" + rep(0x44, 48)},
		{"done, tag in two bytes", "81 1805"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := hex.DecodeString(strings.ReplaceAll(tc.hex, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			m, err := notify.Spec().Decode(data)
			if !errors.Is(err, protocol.ErrNonMinimal) || !protocol.IsViolation(err) {
				t.Fatalf("decoded %#v, err %v; want ErrNonMinimal", m, err)
			}
		})
	}

	// The header's own encoding is its codec's business: a block number
	// in two bytes inside it does not make the announcement malformed.
	raw := h.Bytes()
	i := bytes.Index(raw, []byte{0x8a, 0x18}) // the header body's array of ten, its block number 24–255
	if i < 0 {
		t.Fatalf("header % x: no header body with a block number in two bytes", raw[:8])
	}
	wide := slices.Concat(raw[:i+1], []byte{0x19, 0x00}, raw[i+2:])
	if _, err := block.DecodeHeader(wide); err != nil {
		t.Fatalf("the widened header does not decode: %v", err)
	}
	if _, err := notify.Spec().Decode(slices.Concat([]byte{0x82, 0x01}, wide)); err != nil {
		t.Fatalf("an announcement of a header with a wide block number: %v", err)
	}
}
