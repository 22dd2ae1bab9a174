package votes

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/lab/bench/benchtest"
	"github.com/leiosnode/leiosnode/lab/bench/output"
)

func runVotes(t *testing.T, args ...string) string {
	t.Helper()
	return benchtest.Run(t, NewCommand(), args...)
}

// TestVotesCommand: a short run times every operation for every committee
// size, in the table and in JSON.
func TestVotesCommand(t *testing.T) {
	var r votesReport
	path := filepath.Join(t.TempDir(), "votes.json")
	runVotes(t, "--signers", "2,5", "--min-time", "1ms", "--json", path)
	if err := output.ReadJSON(path, &r); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		op      string
		signers int
	}{
		{opEd25519Verify, 1}, {opSignVote, 1}, {opVerifyVote, 1},
		{opBatchVerify, 2}, {opAggregate, 2}, {opCertify, 2}, {opVerifyCertificate, 2},
		{opBatchVerify, 5}, {opAggregate, 5}, {opCertify, 5}, {opVerifyCertificate, 5},
	}
	if len(r.Rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(r.Rows), len(want), r.Rows)
	}
	for i, w := range want {
		if row := r.Rows[i]; row.Operation != w.op || row.Signers != w.signers || row.Runs < 3 || row.PerOp <= 0 {
			t.Errorf("row %d = %+v, want %s with %d signers", i, row, w.op, w.signers)
		}
	}

	table := runVotes(t, "--signers", "2", "--min-time", "1ms")
	for _, s := range []string{"per op µs", "per op ns", "× ed25519", opEd25519Verify, opVerifyCertificate} {
		if !strings.Contains(table, s) {
			t.Errorf("the table does not say %q:\n%s", s, table)
		}
	}
}

func TestVotesFlags(t *testing.T) {
	for _, args := range [][]string{{"--signers", "0"}, {"--signers", "65537"}, {"--min-time", "0s"}} {
		cmd := NewCommand()
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
