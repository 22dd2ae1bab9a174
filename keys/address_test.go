package keys

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAddressFiles: a payment key's .addr file is its address in bech32
// (CIP-19's vector: the enterprise address of addr_vk1w0l2…), and reading
// takes bech32 or the hex earlier versions wrote.
func TestAddressFiles(t *testing.T) {
	dir := t.TempDir()
	vkey := unhex(t, "73fea80d424276ad0978d4fe5310e8bc2d485f5f6bb3bf87612989f112ad5a7d")
	addr, err := EnterpriseAddress(vkey, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cip19.addr")
	if err := WriteAddressFile(path, addr); err != nil {
		t.Fatal(err)
	}
	// The golden file is what cardano-serialization-lib 15.0.3 writes for
	// this key (EnterpriseAddress.new(0, key hash).to_address().to_bech32()):
	// no newline, so its Address.from_bech32 takes our file untrimmed.
	golden, err := os.ReadFile(filepath.Join("testdata", "cip19-csl.addr"))
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := os.ReadFile(path); !bytes.Equal(text, golden) {
		t.Errorf("address file %q, cardano-serialization-lib writes %q", text, golden)
	}
	hexPath := filepath.Join(dir, "old.addr")
	if err := os.WriteFile(hexPath, []byte(hex.EncodeToString(addr)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, hexPath} {
		if got, err := ReadAddressFile(p); err != nil || !bytes.Equal(got, addr) {
			t.Errorf("ReadAddressFile(%s) = %x, %v; want %x", p, got, err, addr)
		}
	}

	generated, err := GeneratePaymentKeyFiles(filepath.Join(dir, "payment"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := os.ReadFile(filepath.Join(dir, "payment.addr")); !strings.HasPrefix(string(text), "addr1v") {
		t.Errorf("a mainnet payment address file: %q", text)
	}
	if got, err := ReadAddressFile(filepath.Join(dir, "payment.addr")); err != nil || !bytes.Equal(got, generated) {
		t.Errorf("the generated address file reads %x, %v; want %x", got, err, generated)
	}

	bad := filepath.Join(dir, "bad.addr")
	if err := os.WriteFile(bad, []byte("not an address\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAddressFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a file holding no address: %v", err)
	}
	if _, err := ReadAddressFile(filepath.Join(dir, "missing.addr")); err == nil {
		t.Error("a missing file read")
	}
}
