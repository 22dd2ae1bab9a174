package api

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/ledger"
)

// chainWithPayment is a chain database (real Pebble, the real ledger
// rules) whose genesis funds the key of seed 1, and whose one block pays
// three outputs of 2 ADA from it to the key of seed 2, the change back.
func chainWithPayment(t *testing.T) (db *chaindb.DB, payer, payee []byte, tx *ledger.Tx) {
	t.Helper()
	params := ledger.DefaultParams()
	key := func(seed byte) ed25519.PrivateKey { return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32)) }
	addr := func(k ed25519.PrivateKey) []byte {
		return ledger.EnterpriseAddress(0, ledger.KeyHash(k.Public().(ed25519.PublicKey)))
	}
	payer, payee = addr(key(1)), addr(key(2))
	genesis := ledger.MapUTxO{ledger.GenesisTxIn(payer): {Address: payer, Coin: 100_000_000}}
	db, err := chaindb.Open(t.TempDir(), chaindb.Options{
		GenesisUTxO: genesis,
		ApplyBlock: func(utxo ledger.UTxO, blk *block.Block, _ *block.Header, reapply bool) (*ledger.Diff, error) {
			txs := make([][]byte, len(blk.Body.Txs))
			for i, tx := range blk.Body.Txs {
				txs[i] = tx
			}
			return ledger.ApplyTxs(params, utxo, blk.Header.Slot, txs, reapply)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	pay := ledger.TxOut{Address: payee, Coin: 2_000_000}
	tx, err = ledger.BuildPayment(params, []ledger.TxIn{ledger.GenesisTxIn(payer)}, 100_000_000, []ledger.TxOut{pay, pay, pay}, payer, nil, []ed25519.PrivateKey{key(1)})
	if err != nil {
		t.Fatal(err)
	}
	issuer := key(9)
	body := block.NewBody([]block.RawCBOR{tx.Bytes()}, nil)
	hb := block.HeaderBody{BlockNumber: 1, Slot: 1, BodySize: uint64(len(body.Bytes())), BodyHash: body.Hash()}
	copy(hb.IssuerVKey[:], issuer.Public().(ed25519.PublicKey))
	if _, err := db.AddBlock(block.NewBlock(block.NewHeader(hb, issuer), body)); err != nil {
		t.Fatal(err)
	}
	return db, payer, payee, tx
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// TestAddressUTxOs: GET /api/addresses/{address}/utxos lists an address's
// outputs at the tip in Blockfrost's shape, for the address in bech32 or
// hex, by pages; a malformed address, one of another network, or a bad
// page is a 400.
func TestAddressUTxOs(t *testing.T) {
	db, payer, payee, tx := chainWithPayment(t)
	s, err := New(Options{Chain: db, Params: ledger.DefaultParams(), Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	list := func(path string) []apitypes.AddressUTxO {
		t.Helper()
		code, body := get(t, s.Handler(), path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		var out []apitypes.AddressUTxO
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, body)
		}
		return out
	}
	id := tx.ID()
	txHash := hex.EncodeToString(id[:])
	bech := ledger.FormatAddress(payee)
	if !strings.HasPrefix(bech, "addr_test1") {
		t.Fatalf("a network 0 address in bech32: %s", bech)
	}
	base := "/api/addresses/" + bech + "/utxos"
	got := list(base)
	if len(got) != 3 {
		t.Fatalf("payee holds %+v, want 3 outputs", got)
	}
	for i, u := range got {
		coin, err := u.Lovelace()
		txID, idErr := u.TxID()
		if u.Address != bech || u.TxHash != txHash || u.OutputIndex != uint32(i) || err != nil || coin != 2_000_000 ||
			idErr != nil || txID != id {
			t.Errorf("output %d: %+v (%d %v, %x %v)", i, u, coin, err, txID, idErr)
		}
	}
	if code, body := get(t, s.Handler(), base); !strings.Contains(body, `"amount":[{"unit":"lovelace","quantity":"2000000"}]`) {
		t.Errorf("Blockfrost's amount: %d %s", code, body)
	}
	if hexList := list("/api/addresses/" + hex.EncodeToString(payee) + "/utxos"); fmt.Sprint(hexList) != fmt.Sprint(got) {
		t.Errorf("the address in hex: %+v", hexList)
	}
	if change := list("/api/addresses/" + ledger.FormatAddress(payer) + "/utxos"); len(change) != 1 || change[0].OutputIndex != 3 {
		t.Errorf("the payer holds %+v, want its change alone", change)
	}
	for _, page := range []struct {
		query string
		want  []apitypes.AddressUTxO
	}{
		{"?count=2", got[:2]},
		{"?count=2&page=2", got[2:]},
		{"?count=2&page=3", nil},
		{"?page=1&count=1000", got}, // count beyond the most is the most
	} {
		if p := list(base + page.query); fmt.Sprint(p) != fmt.Sprint(page.want) {
			t.Errorf("%s: %+v, want %+v", page.query, p, page.want)
		}
	}

	mainnet := ledger.EnterpriseAddress(1, [28]byte(payee[1:]))
	for path, says := range map[string]string{
		"/api/addresses/addr_test1qqqq/utxos":                        "not an address this node reads",
		"/api/addresses/zz/utxos":                                    "neither bech32 (addr1…, addr_test1…) nor hex",
		"/api/addresses/" + ledger.FormatAddress(mainnet) + "/utxos": "address on network 1, this node's network is 0",
		base + "?count=0":                                            "count must be a number ≥ 1",
		base + "?page=x":                                             "page must be a number ≥ 1",
		"/api/addresses/" + hex.EncodeToString(append([]byte{0x70}, payee[1:]...)) + "/utxos": "script payment credential",
	} {
		if code, body := get(t, s.Handler(), path); code != http.StatusBadRequest || !strings.Contains(body, says) || strings.Contains(body, "transaction") {
			t.Errorf("GET %s: %d %s, want 400 saying %q (and nothing of a transaction)", path, code, body, says)
		}
	}

	// The single-output lookup shows the address in bech32 too.
	if code, body := get(t, s.Handler(), fmt.Sprintf("/api/utxo/%s/0", txHash)); code != http.StatusOK || !strings.Contains(body, bech) {
		t.Errorf("GET /api/utxo: %d %s", code, body)
	}
}

func TestParameters(t *testing.T) {
	params := ledger.DefaultParams()
	params.NetworkID = 3
	s, err := New(Options{Params: params, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, s.Handler(), "/api/parameters")
	var got ledger.Params
	if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil || got != params {
		t.Fatalf("GET /api/parameters: %d %s (%v), want %+v", code, body, err, params)
	}
	if !strings.Contains(body, `"minFeeA":44`) || !strings.Contains(body, `"networkId":3`) {
		t.Errorf("the genesis' field names: %s", body)
	}
}
