package apiclient

import (
	"testing"

	"github.com/leiosnode/leiosnode/api"
)

// TestRejectionRuleName: a rejection groups by the wording of the rule its
// code names, without the detail; an answer with no ledger rule is its own.
func TestRejectionRuleName(t *testing.T) {
	tests := []struct {
		rejection RejectedError
		want      string
	}{
		{RejectedError{Reason: "mempool: tx 0f: ledger: input not in UTxO: ab12#0", Rule: "input-missing"}, "ledger: input not in UTxO"},
		{RejectedError{Reason: "mempool: tx 0f: ledger: fee below minimum: fee 1, minimum 155425", Rule: "fee-too-small"}, "ledger: fee below minimum"},
		{RejectedError{Reason: "ledger: malformed transaction: not an array", Rule: "malformed"}, "ledger: malformed transaction"},
		{RejectedError{Reason: "mempool: tx already in the mempool", Rule: api.RuleInMempool}, "mempool: tx already in the mempool"},
		{RejectedError{Reason: "reading the tx: unexpected EOF"}, "reading the tx: unexpected EOF"},
	}
	for _, tt := range tests {
		if got := tt.rejection.RuleName(); got != tt.want {
			t.Errorf("ruleName of %+v = %q, want %q", tt.rejection, got, tt.want)
		}
	}
}
