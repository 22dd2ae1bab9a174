//go:build unix

package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKeyFilesWrittenPrivate: Write and AddRelay write every signing key —
// each node's and the firehose's funds/ payment keys — 0600, the mode the
// node requires of its own; verification keys and addresses stay 0644.
func TestKeyFilesWrittenPrivate(t *testing.T) {
	tmpl, err := LoadTemplate("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		spec Spec
	}{
		{"on loopback", Spec{Nodes: 2, Funded: 2, Relays: 1}},
		{"on hosts", Spec{Nodes: 2, Funded: 2, Hosts: []string{"10.0.0.1:3001", "10.0.0.2:3001"}, Relays: 1, RelayHosts: []string{"10.0.0.9"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			spec.Dir, spec.Template, spec.SystemStart = t.TempDir(), tmpl, time.Now()
			if _, err := Write(spec); err != nil {
				t.Fatal(err)
			}
			if _, err := AddRelay(spec.Dir, "10.0.0.10:3001"); err != nil {
				t.Fatal(err)
			}
			want := map[string]os.FileMode{".skey": 0o600, ".vkey": 0o644, ".addr": 0o644}
			skeys := 0
			err := filepath.WalkDir(spec.Dir, func(path string, e fs.DirEntry, err error) error {
				if err != nil || e.IsDir() {
					return err
				}
				mode, ok := want[filepath.Ext(path)]
				if !ok {
					return nil
				}
				info, err := e.Info()
				if err != nil {
					return err
				}
				if info.Mode().Perm() != mode {
					t.Errorf("%s: mode %04o, want %04o", path, info.Mode().Perm(), mode)
				}
				if mode == 0o600 {
					skeys++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// 4 a pool (node, issuer, VRF, BLS), 1 a relay (the added one
			// too), 1 a funded address.
			if want := 2*4 + 2 + 2; skeys != want {
				t.Errorf("%d signing keys checked, want %d", skeys, want)
			}
		})
	}
}
