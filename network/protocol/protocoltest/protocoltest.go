// Package protocoltest holds the checks every mini-protocol's tests share.
// It is imported by tests only.
package protocoltest

import (
	"bytes"
	"encoding/hex"
	"os"
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

// Golden reads a file of golden vectors: "name: hex" lines (spaces in the
// hex ignored), blank lines and ; comments skipped.
func Golden(t testing.TB, path string) map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]byte)
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, ";") {
			continue
		}
		name, hexText, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("%s: line %q is not name: hex", path, line)
		}
		b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(hexText), " ", ""))
		if err != nil {
			t.Fatalf("%s: %s: %v", path, name, err)
		}
		out[name] = b
	}
	return out
}

// CheckGolden checks that each of msgs encodes to its vector in the golden
// file at path (CheckEncoding, under the spec specOf names for it), and
// that the file holds no vector without a message.
func CheckGolden(t *testing.T, path string, msgs map[string]protocol.Message, specOf func(name string) *protocol.Spec) {
	golden := Golden(t, path)
	if len(golden) != len(msgs) {
		t.Fatalf("%s: %d golden vectors for %d messages", path, len(golden), len(msgs))
	}
	for name, msg := range msgs {
		t.Run(name, func(t *testing.T) {
			want, ok := golden[name]
			if !ok {
				t.Fatal("no golden vector")
			}
			CheckEncoding(t, specOf(name), msg, want)
		})
	}
}

// CheckEncoding checks that msg encodes to want, and that want decodes
// under spec to a message that encodes to the same bytes.
func CheckEncoding(t *testing.T, spec *protocol.Spec, msg protocol.Message, want []byte) {
	t.Helper()
	got, err := protocol.Encode(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding\n got %x\nwant %x", got, want)
	}
	back, err := spec.Decode(want)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := protocol.Encode(back); err != nil || !bytes.Equal(again, want) {
		t.Fatalf("decode/encode round trip: %x, %v", again, err)
	}
}
