// Package protocoltest holds the checks every mini-protocol's tests share.
// It is imported by tests only.
package protocoltest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// DecodeStable is what a fuzz target asks of a protocol's decoder: data
// refused must be refused as a protocol violation (so the peer is blamed,
// never the node crashed), and a message accepted must re-encode to bytes
// that decode to a message encoding to the same bytes. It returns the
// decoded message, or nil when data was refused.
func DecodeStable(t testing.TB, spec *protocol.Spec, data []byte) protocol.Message {
	t.Helper()
	m, err := spec.Decode(data)
	if err != nil {
		if !protocol.IsViolation(err) {
			t.Fatalf("decode error %v is not a violation", err)
		}
		return nil
	}
	again, err := protocol.Encode(m)
	if err != nil {
		t.Fatalf("re-encoding %T: %v", m, err)
	}
	m2, err := spec.Decode(again)
	if err != nil {
		t.Fatalf("re-encoded %T does not decode: %v", m, err)
	}
	third, err := protocol.Encode(m2)
	if err != nil || !bytes.Equal(again, third) {
		t.Fatalf("%T encoding is not stable: % x vs % x (%v)", m, again, third, err)
	}
	return m
}

// Frames is msgs as a peer writes them: each a frame.
func Frames(t testing.TB, msgs ...protocol.Message) []byte {
	t.Helper()
	var out []byte
	for _, m := range msgs {
		body, err := protocol.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		out = protocol.AppendFrame(out, body)
	}
	return out
}

// ServiceCase is one row of a protocol's NewService table.
type ServiceCase[O any] struct {
	Name string
	Opts O
	// WantErr is what the error must say; "" when NewService must succeed.
	WantErr string
}

// CheckNewService is what every protocol's NewService owes: a case missing
// a required part fails with an error saying which, and the service of any
// other runs want(opts), its Spec with the options' timeouts (spec reads
// the one its server runs).
func CheckNewService[O, S any](t *testing.T, cases []ServiceCase[O], newService func(O) (S, error), spec func(S) *protocol.Spec, want func(O) *protocol.Spec) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			svc, err := newService(tc.Opts)
			if tc.WantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.WantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.WantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := spec(svc)
			for state, st := range want(tc.Opts).States {
				if got.States[state].Timeout != st.Timeout {
					t.Errorf("%s: timeout %v, want %v", state, got.States[state].Timeout, st.Timeout)
				}
			}
		})
	}
}
