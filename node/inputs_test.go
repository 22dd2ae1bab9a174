//go:build unix

package node

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/config"
)

// TestSigningKeyReadableByOthersRefused: each signing key the node runs
// with — the node (libp2p), issuer (cold), VRF and BLS key — is refused by
// New and by CheckConfig (db check) when group or others may read it, in
// one line naming the setting, the file, its mode and the chmod that fixes
// it, before any database is created; at 0600 it passes.
func TestSigningKeyReadableByOthersRefused(t *testing.T) {
	for _, tt := range []struct {
		setting string
		file    func(cfg *config.Config) string
	}{
		{"nodeKeyFile", func(cfg *config.Config) string { return cfg.NodeKeyFile }},
		{"issuerSigningKeyFile", func(cfg *config.Config) string { return cfg.IssuerKeyFile }},
		{"vrfSigningKeyFile", func(cfg *config.Config) string { return cfg.VRFKeyFile }},
		{"blsSigningKeyFile", func(cfg *config.Config) string { return cfg.BLSKeyFile }},
	} {
		t.Run(tt.setting, func(t *testing.T) {
			cfg := testNet(t, 1, 100*time.Millisecond)[0]
			cfg.Path = filepath.Join(filepath.Dir(cfg.NodeKeyFile), "config.json")
			key := tt.file(cfg)

			must(t, os.Chmod(key, 0o644))
			want := "config " + cfg.Path + ": " + tt.setting + ": " + key + ": readable by group or others (mode 0644): " +
				"a signing key must be private; run chmod 600 " + key
			if _, err := New(cfg, Options{Logger: quietLogger()}); err == nil || err.Error() != want {
				t.Errorf("New with %s at 0644: %v\nwant: %s", tt.setting, err, want)
			}
			if err := CheckConfig(cfg); err == nil || err.Error() != want {
				t.Errorf("CheckConfig with %s at 0644: %v\nwant: %s", tt.setting, err, want)
			}
			if _, err := os.Stat(cfg.DatabasePath); !os.IsNotExist(err) {
				t.Errorf("databasePath %s exists after the refused start (%v)", cfg.DatabasePath, err)
			}

			must(t, os.Chmod(key, 0o600))
			if err := CheckConfig(cfg); err != nil {
				t.Errorf("CheckConfig with %s at 0600: %v", tt.setting, err)
			}
		})
	}
}
