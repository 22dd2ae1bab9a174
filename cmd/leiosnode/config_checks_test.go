//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunAndDBCheckRefuseTheSameConfig: a config the node would not run
// with — a log level that is none, a setting given twice — is refused by
// run and by db check in the same one line naming the file and the
// setting, before anything is created on disk.
func TestRunAndDBCheckRefuseTheSameConfig(t *testing.T) {
	_, good := devnetNode(t)
	written, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		edit func(c []byte) []byte
		want string // the line after "Error: config <file>: "
	}{
		{"log level that is none", func(c []byte) []byte {
			return bytes.Replace(c, []byte("{"), []byte(`{"logLevel": "loud",`), 1)
		}, `logLevel is "loud": it must be debug, info, warn or error`},
		{"databasePath twice", func(c []byte) []byte {
			return bytes.Replace(c, []byte("{"), []byte(`{"databasePath": "/nonexistent/other-db",`), 1)
		}, `duplicate key "databasePath": it appears twice, and only the last would count; keep one`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(filepath.Dir(good), "refused.json")
			if err := os.WriteFile(cfg, tt.edit(written), 0o644); err != nil {
				t.Fatal(err)
			}
			want := "Error: config " + cfg + ": " + tt.want + "\n"
			for _, args := range [][]string{{"run", "--config", cfg}, {"db", "check", "--config", cfg}} {
				stderr, code := runUnlessStarted(t, args...)
				if code != 1 || stderr != want {
					t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1 and exactly:\n%s", strings.Join(args[:len(args)-2], " "), code, stderr, want)
				}
			}
		})
	}
}
