//go:build unix

package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
)

// startFundedNode runs a one-node devnet whose system start is startDelay
// away, as its own process, stopped when the test ends. It returns the
// devnet's directory, the base URL of the node's API and the signing key
// file of its funded address.
func startFundedNode(t *testing.T, startDelay string) (dir, url, payerKey string) {
	t.Helper()
	dir, config := devnetNode(t, "--start-delay", startDelay)
	node := startNode(t, config)
	t.Cleanup(func() { node.stop(t) })
	var cfg struct {
		HTTPAddr string `json:"httpAddr"`
	}
	readJSON(t, config, &cfg)
	return dir, "http://" + cfg.HTTPAddr, filepath.Join(dir, "funds", "payment-0.skey")
}

// newPayee writes a payment key as DIR/name.{skey,vkey,addr} and returns
// its address.
func newPayee(t *testing.T, dir, name string) []byte {
	t.Helper()
	prefix := filepath.Join(dir, name)
	if out, err := execute(context.Background(), "keygen", "--kind", "payment", "--out", prefix); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	addr, err := keys.ReadAddressFile(prefix + ".addr")
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// sendTx runs leiosnode tx send in-process.
func sendTx(skey, to, amount, node string) (string, error) {
	out, err := execute(context.Background(), "tx", "send", "--skey", skey, "--to", to, "--amount", amount, "--node", node)
	return strings.TrimSpace(out), err
}

// awaitOutput polls the node's address endpoint until address holds the
// output index of tx id with coin.
func awaitOutput(t *testing.T, node string, address []byte, id string, index uint32, coin uint64) {
	t.Helper()
	what := fmt.Sprintf("%s holding %s#%d of %d lovelace", ledger.FormatAddress(address), id, index, coin)
	waittest.Until(t, what, func() bool {
		seen, err := apiclient.AddressUTxOs(context.Background(), http.DefaultClient, node, address)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range seen {
			if got, err := u.Lovelace(); u.TxHash == id && u.OutputIndex == index && err == nil && got == coin {
				return true
			}
		}
		return false
	})
}

// TestTxSend: a devnet's funded key pays a new address with leiosnode tx
// send against a node run as its own process; the node's address endpoint
// then lists the payment at the new address and the change at the
// payer's. The payee can pay on (to an address given in hex), not more
// than it holds; a node that does not answer, or an address of another
// network, is a clear error.
func TestTxSend(t *testing.T) {
	dir, url, payerKey := startFundedNode(t, "1s")
	payer, err := keys.ReadAddressFile(filepath.Join(dir, "funds", "payment-0.addr"))
	if err != nil {
		t.Fatal(err)
	}
	alice := newPayee(t, dir, "alice")

	id, err := sendTx(payerKey, filepath.Join(dir, "alice.addr"), "5000000", url)
	if err != nil {
		t.Fatal(err)
	}
	awaitOutput(t, url, alice, id, 0, 5_000_000)
	change := uint64(1_000_000_000_000 - 5_000_000) // the genesis funds less the payment …
	list, err := apiclient.AddressUTxOs(context.Background(), http.DefaultClient, url, payer)
	if err != nil || len(list) != 1 || list[0].TxHash != id || list[0].OutputIndex != 1 {
		t.Fatalf("the payer holds %+v (%v), want its change alone", list, err)
	}
	if got, _ := list[0].Lovelace(); got >= change || got < change-1_000_000 { // … and a fee under 1 ADA
		t.Errorf("the change is %d lovelace, want a little under %d", got, change)
	}

	aliceKey := filepath.Join(dir, "alice.skey")
	if _, err := sendTx(aliceKey, hex.EncodeToString(payer), "6000000", url); err == nil ||
		!strings.Contains(err.Error(), "insufficient funds: "+ledger.FormatAddress(alice)+" holds 5000000 lovelace in 1 outputs") {
		t.Errorf("paying more than alice holds: %v", err)
	}
	if id, err := sendTx(aliceKey, hex.EncodeToString(payer), "2000000", url); err != nil || len(id) != 64 {
		t.Errorf("alice pays to an address in hex: %q, %v", id, err)
	}
	if _, err := sendTx(aliceKey, ledger.FormatAddress(payer), "2000000", "http://127.0.0.1:1"); err == nil ||
		!strings.Contains(err.Error(), "node unreachable at http://127.0.0.1:1") {
		t.Errorf("a node that does not answer: %v", err)
	}
	mainnet := ledger.EnterpriseAddress(1, [28]byte(payer[1:]))
	if _, err := sendTx(aliceKey, ledger.FormatAddress(mainnet), "2000000", url); err == nil ||
		!strings.Contains(err.Error(), "--to: address on network 1, the node's network is 0") {
		t.Errorf("paying an address of another network: %v", err)
	}
	// As an operator sees it: one error line.
	stderr, code := runCLI(t, "tx", "send", "--skey", aliceKey, "--to", "addr_test1nope", "--amount", "2000000", "--node", url)
	checkOneErrorLine(t, stderr, code, "--to: ")
}

// TestTxSendRejected: the node refuses a tx spending an output a tx in its
// mempool already spends, and tx send says why in the ledger's words. The
// system start is an hour away, so no block takes the first tx off the
// mempool in between.
func TestTxSendRejected(t *testing.T) {
	dir, url, payerKey := startFundedNode(t, "1h")
	bob := filepath.Join(dir, "bob.addr")
	newPayee(t, dir, "bob")
	if _, err := sendTx(payerKey, bob, "5000000", url); err != nil {
		t.Fatal(err)
	}
	_, err := sendTx(payerKey, bob, "6000000", url)
	t.Logf("the second send: %v", err)
	if err == nil || !strings.Contains(err.Error(), "tx rejected: ") || !strings.Contains(err.Error(), "input not in UTxO") {
		t.Fatalf("a second tx spending the same genesis output: %v", err)
	}
}
