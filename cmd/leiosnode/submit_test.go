package main

import (
	"bytes"
	"context"
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
	funds := newTestFunds(t, 1, 1_000_000_000)
	c := funds.chains(1)[0]
	tx, err := c.next(ledger.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
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

// TestSubmitToFakeNode: a tx the node's ledger accepts gets its id back,
// and the same tx again is refused with the node's reason.
func TestSubmitToFakeNode(t *testing.T) {
	f, fakes := fakeDevnet(t, 1, 1, firehoseOptions{Rate: 1})
	tx, err := f.chains[0].next(f.params)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tx.signed")
	if err := os.WriteFile(file, tx.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execute(context.Background(), "submit", "--node", fakes[0].server.URL, file)
	if id := tx.ID(); err != nil || out != hex.EncodeToString(id[:])+"\n" {
		t.Fatalf("first submit: %q, %v", out, err)
	}
	if _, err := execute(context.Background(), "submit", "--node", fakes[0].server.URL, file); err == nil || !strings.Contains(err.Error(), "already in the mempool") {
		t.Errorf("second submit: %v, want the node's reason", err)
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
