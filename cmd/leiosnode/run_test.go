package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunStartupErrors: a node that cannot start says why, and run fails.
func TestRunStartupErrors(t *testing.T) {
	dir := t.TempDir()
	badLevel := filepath.Join(dir, "bad-level.json")
	os.WriteFile(badLevel, []byte(`{"genesisFile": "g.json", "databasePath": "db", "nodeKeyFile": "k", "logLevel": "loud"}`), 0o644)
	incomplete := filepath.Join(dir, "incomplete.json")
	os.WriteFile(incomplete, []byte(`{"genesisFile": "g.json"}`), 0o644)
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no config flag", []string{"run"}, `"config" not set`},
		{"missing config", []string{"run", "--config", filepath.Join(dir, "nope.json")}, "nope.json"},
		{"incomplete config", []string{"run", "--config", incomplete}, "are required"},
		{"bad log level", []string{"run", "--config", badLevel}, "logLevel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := execute(context.Background(), tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if !strings.Contains(out, "Error: ") {
				t.Errorf("the error was not printed: %q", out)
			}
		})
	}
}
