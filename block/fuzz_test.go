package block

import (
	"bytes"
	"testing"
)

// Decoders of wire data must never panic, and what they accept must keep its
// bytes (headers, blocks) or re-encode to them (EB bodies).

func FuzzDecodeHeader(f *testing.F) {
	f.Add(NewHeader(testHeaderBody(), testKey()).Bytes())
	f.Add([]byte{0x82, 0x80, 0x40})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeHeader(data)
		if err != nil {
			return
		}
		if !bytes.Equal(h.Bytes(), data) || h.Hash() != HashBytes(data) {
			t.Fatal("accepted header lost its bytes")
		}
		_ = h.VerifySignature()
	})
}

func FuzzDecodeBlock(f *testing.F) {
	hb := testHeaderBody()
	body := NewBody(nil, &Certificate{Signers: []byte{0x80}})
	hb.BodySize, hb.BodyHash = uint64(len(body.Bytes())), body.Hash()
	f.Add(NewBlock(NewHeader(hb, testKey()), body).Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBlock(data)
		if err != nil {
			return
		}
		if !bytes.Equal(b.Bytes(), data) {
			t.Fatal("accepted block lost its bytes")
		}
		_ = b.CheckBody()
	})
}

func FuzzDecodeEBBody(f *testing.F) {
	eb, _ := NewEBBody([]EBTx{{TxHash: HashBytes([]byte("a")), Size: 300}, {TxHash: HashBytes([]byte("b")), Size: 7}}, DefaultEBLimits)
	f.Add(eb.Bytes())
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, data []byte) {
		eb, err := DecodeEBBody(data, DefaultEBLimits)
		if err != nil {
			return
		}
		again, err := NewEBBody(eb.Txs, DefaultEBLimits)
		if err != nil || !bytes.Equal(again.Bytes(), data) {
			t.Fatal("accepted EB body does not re-encode to itself")
		}
	})
}

func FuzzDecodePointVoteCert(f *testing.F) {
	p, _ := Marshal(Point{Slot: 9, Hash: HashBytes(nil)})
	v, _ := Marshal(Vote{VoterSeat: 1})
	f.Add(p)
	f.Add(v)
	f.Fuzz(func(t *testing.T, data []byte) {
		var pt Point
		if Unmarshal(data, &pt) == nil {
			if again, _ := Marshal(pt); len(again) == 0 {
				t.Fatal("point does not re-encode")
			}
		}
		var vote Vote
		_ = Unmarshal(data, &vote)
		var cert Certificate
		_ = Unmarshal(data, &cert)
	})
}
