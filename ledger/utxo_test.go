package ledger

import (
	"bytes"
	"maps"
	"testing"

	"pgregory.net/rapid"
)

func TestTxInKey(t *testing.T) {
	a := TxIn{TxID: [32]byte{1, 2}, Index: 258}
	k := a.Key()
	if k[32] != 0 || k[33] != 0 || k[34] != 1 || k[35] != 2 {
		t.Fatalf("index not big-endian: %x", k[32:])
	}
	back, err := TxInFromKey(k[:])
	if err != nil || back != a {
		t.Fatalf("round trip: %v %v", back, err)
	}
	// Keys of one tx sort together, by index.
	b := TxIn{TxID: a.TxID, Index: 259}
	c := TxIn{TxID: [32]byte{1, 3}, Index: 0}
	ka, kb, kc := a.Key(), b.Key(), c.Key()
	if bytes.Compare(ka[:], kb[:]) >= 0 || bytes.Compare(kb[:], kc[:]) >= 0 {
		t.Fatal("key order")
	}
	if _, err := TxInFromKey(k[:35]); err == nil {
		t.Fatal("short key accepted")
	}
}

func TestTxOutEncoding(t *testing.T) {
	out := TxOut{Address: EnterpriseAddress(0, [28]byte{7}), Coin: 1<<40 + 5}
	enc := EncodeTxOut(out)
	back, err := DecodeTxOut(enc)
	if err != nil || !equalTxOut(back, out) {
		t.Fatalf("round trip: %v %v", back, err)
	}
	enc[10] ^= 0xff
	if back.Address[1] != 7 {
		t.Fatal("decoded output aliases the encoding")
	}
	if _, err := DecodeTxOut(enc[:7]); err == nil {
		t.Fatal("short value accepted")
	}
}

func TestDiff(t *testing.T) {
	x, y, z := TxIn{Index: 1}, TxIn{Index: 2}, TxIn{Index: 3}
	ox, oy := TxOut{Coin: 10}, TxOut{Address: []byte{6}, Coin: 20}
	d := NewDiff()
	d.Insert(x, ox)
	d.Delete(x, ox) // created and spent within the diff: in neither
	d.Delete(y, oy) // spent from below
	d.Txs = 2
	if d.Len() != 1 || len(d.Inserts) != 0 {
		t.Fatalf("diff %+v", d)
	}
	c := d.Clone()
	c.Insert(z, ox)
	if d.Len() != 1 {
		t.Fatal("Clone shares maps")
	}
	later := NewDiff()
	later.Delete(z, ox)
	later.Txs = 1
	d.Append(c)
	d.Append(later)
	if d.Len() != 1 || d.Txs != 2+2+1 {
		t.Fatalf("appended %+v", d)
	}
	if spent, ok := d.Deletes[y]; !ok || !equalTxOut(spent, oy) {
		t.Fatalf("delete of %s lost, or without its output: %v %v", y, spent, ok)
	}
}

// Overlay{Base, diffs} reads like the base with each diff applied in turn,
// and folding the diffs with Append changes nothing.
func TestPropertyOverlay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ins := rapid.Custom(func(t *rapid.T) TxIn { return TxIn{Index: rapid.Uint32Range(0, 7).Draw(t, "index")} })
		base := MapUTxO{}
		for _, in := range rapid.SliceOfDistinct(ins, func(in TxIn) TxIn { return in }).Draw(t, "base") {
			base[in] = TxOut{Coin: uint64(in.Index)}
		}
		model := maps.Clone(base)
		var diffs []*Diff
		for range rapid.IntRange(0, 4).Draw(t, "diffs") {
			d := NewDiff()
			for range rapid.IntRange(0, 5).Draw(t, "ops") {
				in := ins.Draw(t, "in")
				// A diff spends only what exists and creates only what does not.
				if spent, ok := model[in]; ok {
					d.Delete(in, spent)
					delete(model, in)
				} else {
					out := TxOut{Coin: rapid.Uint64().Draw(t, "coin")}
					d.Insert(in, out)
					model[in] = out
				}
			}
			diffs = append(diffs, d)
		}
		folded := NewDiff()
		for _, d := range diffs {
			folded.Append(d)
		}
		// What the folded diff spends is the base's, output included.
		for in, spent := range folded.Deletes {
			if want, ok := base[in]; !ok || want.Coin != spent.Coin {
				t.Fatalf("folded diff spends %s as %v, the base holds %v %v", in, spent, want, ok)
			}
		}
		for i := range uint32(8) {
			in := TxIn{Index: i}
			want, wantOK := model[in]
			for _, view := range []UTxO{Overlay{Base: base, Diffs: diffs}, Overlay{Base: base, Diffs: []*Diff{folded}}, materialize(base, folded)} {
				got, ok, err := view.Lookup(in)
				if err != nil || ok != wantOK || got.Coin != want.Coin {
					t.Fatalf("%T lookup %s: %v %v, want %v %v", view, in, got, ok, want, wantOK)
				}
			}
		}
	})
}

func TestOverlayNilBase(t *testing.T) {
	d := NewDiff()
	d.Insert(TxIn{Index: 1}, TxOut{Coin: 1})
	o := Overlay{Diffs: []*Diff{d}}
	if _, ok, _ := o.Lookup(TxIn{Index: 1}); !ok {
		t.Fatal("insert not seen")
	}
	if _, ok, _ := o.Lookup(TxIn{Index: 2}); ok {
		t.Fatal("phantom output")
	}
}
