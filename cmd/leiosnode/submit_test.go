package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestSubmitCommand submits a tx file to a node that answers as told and
// checks what reached the node and what the command said.
func TestSubmitCommand(t *testing.T) {
	tx := signedTx(t)
	id := tx.ID()
	txID := hex.EncodeToString(id[:])
	dir := t.TempDir()
	rawFile := filepath.Join(dir, "tx.signed")
	if err := os.WriteFile(rawFile, tx.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	envelope := func(typ string) string {
		path := filepath.Join(dir, strings.ReplaceAll(typ, " ", "-")+".json")
		e := keys.Envelope{Type: typ, Description: "Ledger Cddl Format", CborHex: hex.EncodeToString(tx.Bytes())}
		if err := os.WriteFile(path, e.Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	tests := []struct {
		name    string
		file    string
		status  int
		answer  string
		wantOut string // the command's output, when it succeeds
		wantErr string // a part of its error, else ""
	}{
		{name: "raw CBOR, admitted", file: rawFile, status: http.StatusAccepted, answer: `"` + txID + `"`, wantOut: txID + "\n"},
		{name: "text envelope, admitted", file: envelope("Tx ConwayEra"), status: http.StatusAccepted, answer: `"` + txID + `"`, wantOut: txID + "\n"},
		{name: "older cardano-cli envelope", file: envelope("Witnessed Tx ConwayEra"), status: http.StatusAccepted, answer: `"` + txID + `"`, wantOut: txID + "\n"},
		{name: "rejected", file: rawFile, status: http.StatusBadRequest, answer: `{"error": "ledger: input not in UTxO: ab#0"}`, wantErr: "tx rejected: ledger: input not in UTxO: ab#0"},
		{name: "mempool full", file: rawFile, status: http.StatusServiceUnavailable, answer: `{"error": "mempool full"}`, wantErr: "mempool full"},
		{name: "something else", file: rawFile, status: http.StatusInternalServerError, answer: `{"error": "disk on fire"}`, wantErr: "500 Internal Server Error: disk on fire"},
		{name: "not a tx envelope", file: envelope("PaymentSigningKeyShelley_ed25519"), wantErr: `"PaymentSigningKeyShelley_ed25519" is not a signed tx`},
		{name: "no file", file: filepath.Join(dir, "missing"), wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var received []byte
			node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/api/submit/tx" || r.Header.Get("Content-Type") != "application/cbor" {
					t.Errorf("request %s %s, Content-Type %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
				}
				received, _ = io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.answer)
			}))
			defer node.Close()
			out, err := execute(context.Background(), "submit", "--node", node.URL+"/", tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if out != tt.wantOut {
				t.Errorf("output %q, want %q", out, tt.wantOut)
			}
			if !bytes.Equal(received, tx.Bytes()) {
				t.Errorf("the node received %x, want the tx %x", received, tx.Bytes())
			}
		})
	}
}

func TestReadTxFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name, content string
		want          []byte
		wantErr       string
	}{
		{name: "raw", content: "\x84\xa0\xa0\xf5\xf6", want: []byte("\x84\xa0\xa0\xf5\xf6")},
		{name: "envelope with leading space", content: "\n  {\"type\": \"Tx ConwayEra\", \"description\": \"\", \"cborHex\": \"84a0a0f5f6\"}", want: []byte("\x84\xa0\xa0\xf5\xf6")},
		{name: "bad hex", content: `{"type": "Tx ConwayEra", "cborHex": "8x"}`, wantErr: "cborHex"},
		{name: "unsigned", content: `{"type": "Unwitnessed Tx ConwayEra", "cborHex": "84"}`, wantErr: "not a signed tx"},
		{name: "bad json", content: `{"type": `, wantErr: "malformed"},
		{name: "empty", content: "", wantErr: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readTxFile(write(tt.name, tt.content))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Errorf("got %x, %v; want %x", got, err, tt.want)
			}
		})
	}
}

// signedTx is a valid signed payment from a fresh key's genesis funds.
func signedTx(t *testing.T) *ledger.Tx {
	t.Helper()
	key, err := keys.GenerateSigningKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	address, err := keys.EnterpriseAddress(key.Public().(ed25519.PublicKey), 0)
	if err != nil {
		t.Fatal(err)
	}
	in := []ledger.TxIn{ledger.GenesisTxIn(address)}
	tx, err := ledger.BuildPayment(ledger.DefaultParams(), in, 1_000_000_000, nil, address, nil, []ed25519.PrivateKey{key})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}
