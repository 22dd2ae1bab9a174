package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/internal/version"
)

// TestPeerID: peer-id prints the ID keygen gave the key, then the suffix
// a topology names the node by.
func TestPeerID(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "node")
	out, err := execute(context.Background(), "keygen", "--kind", "node", "--out", prefix)
	if err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	id := strings.TrimSpace(out)
	out, err = execute(context.Background(), "peer-id", "--key", prefix+".skey")
	if err != nil || out != id+"\n/p2p/"+id+"\n" {
		t.Errorf("peer-id: %v, %q; want %s and /p2p/%s", err, out, id, id)
	}

	paymentPrefix := filepath.Join(t.TempDir(), "payment")
	if _, err := execute(context.Background(), "keygen", "--kind", "payment", "--out", paymentPrefix); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ key, wantErr string }{
		{paymentPrefix + ".skey", "wrong key type"},
		{prefix + ".missing", "no such file"},
	} {
		if _, err := execute(context.Background(), "peer-id", "--key", tt.key); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("peer-id --key %s: %v, want an error saying %q", tt.key, err, tt.wantErr)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	out, err := execute(context.Background(), "version")
	if err != nil || out != "leiosnode "+version.String()+"\n" || version.String() == "" {
		t.Errorf("version: %v, %q", err, out)
	}
}
