package ledger

import (
	"bytes"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

// FuzzDecodeTx: DecodeTx never panics; whatever it accepts keeps its bytes,
// hashes them (not a re-encoding), and re-encodes canonically to a tx with
// the same content.
func FuzzDecodeTx(f *testing.F) {
	in := "00" + "81" + "82" + "5820" + hexT11 + "00"
	out := "01" + "81" + "82" + hexEnt + "1a000f4240"
	seeds := []string{
		"84" + "a3" + in + out + "02" + "1a00030d40" + "a1" + "00" + "81" + hexWit + "f5f6",
		"84" + "a4" + "00" + "d90102" + "81" + "82" + "5820" + hexT11 + "01" + out + "02" + "00" + "03" + "1a05f5e100" +
			"a1" + "00" + "d90102" + "81" + hexWit + "f5f6",
		"84" + "a4" + in + "01" + "81" + "a2" + "00" + hexBase + "01" + "1a001e8480" + "02" + "00" + "08" + "182a" + "a0" + "f5f6",
		"84" + "a4" + in + out + "02" + "00" + "04" + "80" + "a0" + "f5f6",                                // certificates
		"84" + "a3" + in + out + "02" + "00" + "a0" + "f4f6",                                              // is_valid false
		"84" + "a3" + in + "01" + "81" + "82" + hexEnt + "82" + "00" + "a0" + "02" + "00" + "a0" + "f5f6", // multi-asset
		"",
		// Auxiliary data: the Shelley, Allegra–Mary and Alonzo forms, a
		// hash that is not the data's, bytes over 64, a script.
		txWithAux(f, "a1"+"1902a2"+"a1"+"636d7367"+"82"+"6568656c6c6f"+"a1"+"20"+"43010203"),
		txWithAux(f, "82"+"a1"+"00"+"80"+"80"),
		txWithAux(f, "d90103"+"a1"+"00"+"a1"+"01"+"3903e7"),
		"84" + "a4" + in + out + "02" + "00" + "07" + "5820" + hexT11 + "a0" + "f5" + "a0",
		txWithAux(f, "a1"+"00"+"5841"+strings.Repeat("00", 65)),
		txWithAux(f, "d90103"+"a1"+"01"+"80"),
		cardanoMainnetMetadataTx,
	}
	for _, s := range seeds {
		f.Add(unhex(f, s))
	}
	k := testKey(7)
	built, err := BuildTx([]TxIn{{TxID: [32]byte{1}, Index: 2}}, []TxOut{{Address: addrOf(k), Coin: 3_000_000}}, 200_000, ptr(9), signers(k, testKey(8)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(built.Bytes())

	f.Fuzz(func(t *testing.T, raw []byte) {
		tx, err := DecodeTx(raw)
		if err != nil {
			return
		}
		if !bytes.Equal(tx.Bytes(), raw) || tx.Size() != len(raw) {
			t.Fatal("bytes not kept")
		}
		if tx.ID() != hash256(tx.BodyBytes()) || tx.Hash() != hash256(raw) {
			t.Fatal("ID/Hash are not digests of the wire bytes")
		}
		if bytes.Index(raw, tx.BodyBytes()) < 1 {
			t.Fatal("body is not part of the tx")
		}
		for i, o := range tx.Outputs {
			if err := CheckAddress(o.Address); err != nil {
				t.Fatalf("output %d: accepted address %s: %v", i, hex.EncodeToString(o.Address), err)
			}
			if tx.OutputSize(i) < len(o.Address) {
				t.Fatalf("output %d size %d", i, tx.OutputSize(i))
			}
		}
		// Canonical re-encoding of the same content decodes to the same content.
		if aux := tx.AuxData(); aux != nil {
			if bytes.Index(raw, aux) < 1 || checkAuxData(aux) != nil {
				t.Fatal("accepted auxiliary data is not part of the tx, or breaks the rules")
			}
		}
		body, err := TxBody{Inputs: tx.Inputs, Outputs: tx.Outputs, Fee: tx.Fee, TTL: tx.TTL, ValidityStart: tx.ValidityStart, AuxData: tx.AuxData()}.encode()
		if err != nil {
			t.Fatal(err)
		}
		var ws witnessSetWire
		for _, w := range tx.Witnesses {
			ws.VKeys = append(ws.VKeys, witnessArray{VKey: w.VKey[:], Signature: w.Signature[:]})
		}
		again, err := assemble(body, ws, tx.AuxData())
		if err != nil {
			t.Fatal(err)
		}
		tx2, err := DecodeTx(again)
		if err != nil {
			t.Fatalf("canonical re-encoding refused: %v", err)
		}
		if !sameContent(tx, tx2) {
			t.Fatalf("content changed through re-encoding:\n%x\n%x", raw, again)
		}
	})
}

func sameContent(a, b *Tx) bool {
	return slices.Equal(a.Inputs, b.Inputs) &&
		slices.EqualFunc(a.Outputs, b.Outputs, equalTxOut) &&
		a.Fee == b.Fee && equalOpt(a.TTL, b.TTL) && equalOpt(a.ValidityStart, b.ValidityStart) &&
		slices.Equal(a.Witnesses, b.Witnesses) && bytes.Equal(a.AuxData(), b.AuxData())
}
