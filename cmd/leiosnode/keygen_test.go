package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/keys/peerid"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestKeygen: each kind writes key files the keys package reads back, and
// prints what an operator pastes elsewhere (peer ID, vkey hex, address).
func TestKeygen(t *testing.T) {
	dir := t.TempDir()
	keygen := func(kind string) (prefix, printed string) {
		t.Helper()
		prefix = filepath.Join(dir, kind)
		out, err := execute(context.Background(), "keygen", "--kind", kind, "--out", prefix)
		if err != nil {
			t.Fatalf("keygen %s: %v\n%s", kind, err, out)
		}
		return prefix, strings.TrimSpace(out)
	}

	prefix, printed := keygen("node")
	nodeKey, err := keys.ReadSigningKey(prefix+".skey", keys.Node)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := peerid.Of(nodeKey.Public().(ed25519.PublicKey)); id.String() != printed {
		t.Errorf("node: printed %q, the key's peer ID is %s", printed, id)
	}

	prefix, printed = keygen("pool")
	pool, err := keys.ReadVerificationKey(prefix+".vkey", keys.StakePool)
	if err != nil {
		t.Fatal(err)
	}
	if skey, err := keys.ReadSigningKey(prefix+".skey", keys.StakePool); err != nil || !pool.Equal(skey.Public()) {
		t.Errorf("pool: skey %v does not match the vkey", err)
	}
	if hex.EncodeToString(pool) != printed {
		t.Errorf("pool: printed %q, vkey %x", printed, pool)
	}

	prefix, printed = keygen("vrf")
	vrfKey, err := keys.ReadVRFSigningKey(prefix + ".skey")
	if err != nil {
		t.Fatal(err)
	}
	if vkey, err := keys.ReadVRFVerificationKey(prefix + ".vkey"); err != nil || vkey != vrfKey.Public() {
		t.Errorf("vrf: vkey %v does not match the skey", err)
	}
	if pub := vrfKey.Public(); hex.EncodeToString(pub[:]) != printed {
		t.Errorf("vrf: printed %q, vkey %x", printed, pub)
	}

	prefix, printed = keygen("bls")
	blsKey, err := keys.ReadBLSSigningKey(prefix + ".skey")
	if err != nil {
		t.Fatal(err)
	}
	if vkey, err := keys.ReadBLSVerificationKey(prefix + ".vkey"); err != nil || !vkey.Equal(blsKey.PublicKey()) {
		t.Errorf("bls: vkey %v does not match the skey", err)
	}
	// What is printed pastes into a genesis pool entry, and checks there.
	var entry struct{ BLSVKey, BLSPoP string }
	if err := json.Unmarshal([]byte("{"+printed+"}"), &entry); err != nil {
		t.Fatalf("bls: printed %q: %v", printed, err)
	}
	pub := blsKey.PublicKey().Bytes()
	if entry.BLSVKey != hex.EncodeToString(pub[:]) {
		t.Errorf("bls: printed vkey %s, key %x", entry.BLSVKey, pub)
	}
	proofBytes, _ := hex.DecodeString(entry.BLSPoP)
	proof, err := bls.PossessionProofFromBytes(proofBytes)
	if err != nil || !blsKey.PublicKey().VerifyPossession(proof) {
		t.Errorf("bls: printed proof of possession %s does not verify: %v", entry.BLSPoP, err)
	}

	prefix, printed = keygen("payment")
	payment, err := keys.ReadVerificationKey(prefix+".vkey", keys.Payment)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := keys.EnterpriseAddress(payment, 0)
	addrFile, _ := os.ReadFile(prefix + ".addr")
	if ledger.FormatAddress(addr) != printed || strings.TrimSpace(string(addrFile)) != printed {
		t.Errorf("payment: printed %q, .addr %q, address %x", printed, addrFile, addr)
	}

	// Never overwrite a key; reject unknown kinds.
	before, _ := os.ReadFile(prefix + ".skey")
	if _, err := execute(context.Background(), "keygen", "--kind", "payment", "--out", prefix); err == nil || !strings.Contains(err.Error(), "not overwriting") {
		t.Errorf("keygen over an existing key: %v", err)
	}
	if after, _ := os.ReadFile(prefix + ".skey"); string(after) != string(before) {
		t.Error("an existing key was overwritten")
	}
	if _, err := execute(context.Background(), "keygen", "--kind", "kes", "--out", filepath.Join(dir, "kes")); err == nil || !strings.Contains(err.Error(), "want node, pool, vrf, bls or payment") {
		t.Errorf("keygen --kind kes: %v", err)
	}
}
