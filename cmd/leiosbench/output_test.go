package main

import (
	"encoding/json"
	"os"
	"testing"
)

// readReport reads the JSON report a run wrote to path into r.
func readReport(t *testing.T, path string, r any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, r); err != nil {
		t.Fatalf("%s is not one JSON document: %v\n%s", path, err, raw)
	}
}
