package fetch

import (
	"errors"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// The /leios/fetch/2 messages encode to the vectors derived from the CDDL
// in testdata/fetch2.golden, and decode back to the same bytes.
func TestGoldenMessages2(t *testing.T) {
	body := unhex(t, "81 a1 5820"+strings.Repeat("22", 32)+" 03")
	msgs := map[string]protocol.Message{
		"multi-block request": &MsgMultiBlockRequest{EbHashes: []block.Hash{fill(0x11), fill(0x33)}},
		"block":               &MsgMultiBlock{Body: body, Txs: TxList{{1, 2, 3}}},
		"no more blocks":      &MsgNoMoreBlocks{},
		"block txs request":   &MsgTxsRequest2{EbHash: fill(0x11), Bitmap: TxBitmap{{Index: 0, Mask: 0x8000000000000001}, {Index: 2, Mask: 0xff}}},
		"block request":       &MsgTxsRequest2{EbHash: fill(0x11)},
		"block txs":           &MsgTxs2{Txs: TxList{{1, 2, 3}, {4}}},
		"block txs, the body": &MsgTxs2{Txs: TxList{body}},
		"done":                &MsgDone2{},
	}
	protocoltest.CheckGolden(t, "testdata/fetch2.golden", msgs, func(string) *protocol.Spec { return Spec2(testLimits) })
}

// Malformed /leios/fetch/2 messages are refused as violations.
func TestMalformedMessages2(t *testing.T) {
	h := "5820" + strings.Repeat("11", 32)
	for _, tc := range []struct{ name, hex string }{
		{"no hashes", "82 00 80"},
		{"a hash twice", "82 00 82" + h + h},
		{"nine hashes", "82 00 89" + strings.Repeat(h, 9)},
		{"a short hash", "82 00 81 5801 11"},
		{"bitmap not in 9-octet chunks", "83 03" + h + "48 0000000000000001"},
		{"bitmap chunk with no bit", "83 03" + h + "49 00 0000000000000000"},
		{"bitmap chunks descending", "83 03" + h + "52 01 0000000000000001 00 0000000000000001"},
		{"bitmap chunk repeated", "83 03" + h + "52 01 0000000000000001 01 0000000000000001"},
		{"bitmap as a map", "83 03" + h + "a1 00 01"},
		{"indefinite tx list", "82 04 9f 41 04 ff"},
		{"tagged tx", "82 04 81 d818 41 04"},
		{"block body not a map", "83 01 80 80"},
		{"block body an array of two", "83 01 82 a0 a0 80"},
		{"block body an array around no map", "83 01 81 80 80"},
		{"indefinite block body", "83 01 bf ff 80"},
		{"unknown tag", "81 06"},
		{"indefinite message", "9f 05 ff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Spec2(testLimits).Decode(unhex(t, tc.hex))
			if err == nil || !errors.Is(err, protocol.ErrMalformed) {
				t.Fatalf("err %v, want a violation (ErrMalformed)", err)
			}
			if !protocol.IsViolation(err) {
				t.Fatalf("err %v is not a violation", err)
			}
		})
	}
}

// Each /leios/fetch/2 message with an integer, a length or a count longer
// than it needs is refused (ErrNonMinimal), as the CDDL's encoding has
// none.
func TestNonMinimal2(t *testing.T) {
	h := "5820" + strings.Repeat("11", 32)
	body := "a1 5820" + strings.Repeat("22", 32) + " 03"
	for _, tc := range []struct{ name, hex string }{
		{"multi-block request, tag in two bytes", "82 1800 81" + h},
		{"multi-block request, hash count in two bytes", "82 00 9801" + h},
		{"block, tx size in two bytes", "83 01 a1 5820" + strings.Repeat("22", 32) + " 1803 81 43 010203"},
		{"block, tx length in two bytes", "83 01" + body + "81 5803 010203"},
		{"no more blocks, tag in two bytes", "81 1802"},
		{"block txs request, bitmap length in two bytes", "83 03" + h + "5809 00 8000000000000001"},
		{"block txs, array in two bytes", "98 02 04 81 4104"},
		{"done, tag in two bytes", "81 1805"},
		{"done, array in two bytes", "98 01 05"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Spec2(testLimits).Decode(unhex(t, tc.hex))
			if !errors.Is(err, protocol.ErrNonMinimal) || !protocol.IsViolation(err) {
				t.Fatalf("err %v, want ErrNonMinimal", err)
			}
		})
	}
}
