package ledger

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestGenesisTxInGolden(t *testing.T) {
	// Python: blake2b(bytes.fromhex("581d60" + "22"*28), digest_size=32)
	in := GenesisTxIn(unhex(t, "60", hexA22))
	if got := hex.EncodeToString(in.TxID[:]); got != "3008a1ed13fbbb1b176e794f309b7a5e6fe11872720f1dbb1c4d22ffc5687191" || in.Index != 0 {
		t.Fatalf("GenesisTxIn = %s#%d", got, in.Index)
	}
}

func TestGenesisUTxO(t *testing.T) {
	k := testKey(4)
	ent := hex.EncodeToString(addrOf(k))
	base := "00" + hexA22 + hexS66
	bech := FormatAddress(addrOf(testKey(5)))
	utxo, err := GenesisUTxO(map[string]uint64{ent: 50_000_000, base: 7_000_000, bech: 3_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(utxo) != 3 || utxo[GenesisTxIn(addrOf(k))].Coin != 50_000_000 || utxo[GenesisTxIn(unhex(t, base))].Coin != 7_000_000 ||
		utxo[GenesisTxIn(addrOf(testKey(5)))].Coin != 3_000_000 {
		t.Fatalf("utxo %v", utxo)
	}
	// Genesis funds are spendable by their key.
	p := DefaultParams()
	tx, err := BuildPayment(p, []TxIn{GenesisTxIn(addrOf(k))}, 50_000_000, nil, addrOf(k), nil, signers(k))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(p, utxo, 0, tx); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name  string
		funds map[string]uint64
		want  error
	}{
		{"not hex", map[string]uint64{"zz": 1}, nil},
		{"script address", map[string]uint64{"70" + hexA22: 1}, ErrUnsupported},
		{"short address", map[string]uint64{"60" + hexA22[2:]: 1}, ErrMalformed},
		{"same address twice", map[string]uint64{ent: 1, strings.ToUpper(ent): 2}, nil},
		{"in hex and in bech32", map[string]uint64{ent: 1, FormatAddress(addrOf(k)): 2}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := GenesisUTxO(tt.funds)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}
