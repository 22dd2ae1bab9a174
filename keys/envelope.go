package keys

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fxamacker/cbor/v2"

	"github.com/leiosnode/leiosnode/internal/strictjson"
)

// Errors of reading a key; each is wrapped with the file and the detail.
var (
	ErrWrongType   = errors.New("keys: wrong key type")
	ErrMalformed   = errors.New("keys: malformed key file")
	ErrWrongLength = errors.New("keys: wrong key length")
	ErrKeyMismatch = errors.New("keys: public key does not match the seed")
)

// Envelope is a Cardano text envelope: the JSON form of a key file.
type Envelope struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	CborHex     string `json:"cborHex"`
}

// newEnvelope wraps a raw key as a CBOR byte string.
func newEnvelope(typ, description string, payload []byte) Envelope {
	enc, err := cbor.Marshal(payload)
	if err != nil {
		panic(err) // unreachable: a byte slice always encodes
	}
	return Envelope{Type: typ, Description: description, CborHex: hex.EncodeToString(enc)}
}

// ParseEnvelope decodes the JSON of a key file, refusing a key given
// twice: two cborHex would leave the file's key the last one's.
func ParseEnvelope(data []byte) (Envelope, error) {
	var e Envelope
	if err := strictjson.CheckDuplicates(data); err != nil {
		return Envelope{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return Envelope{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if e.Type == "" || e.CborHex == "" {
		return Envelope{}, fmt.Errorf("%w: missing \"type\" or \"cborHex\"", ErrMalformed)
	}
	return e, nil
}

// Marshal encodes the envelope as cardano-cli does: indented JSON with the
// fields in the order type, description, cborHex.
func (e Envelope) Marshal() []byte {
	b, err := json.MarshalIndent(e, "", "    ")
	if err != nil {
		panic(err) // unreachable: three strings always encode
	}
	return append(b, '\n')
}

// payload checks that the envelope's type is one of wantTypes (the first
// is the one named in errors) and returns its raw key: the content of the
// canonical CBOR byte string in cborHex, of exactly size bytes.
func (e Envelope) payload(size int, wantTypes ...string) ([]byte, error) {
	if !slices.Contains(wantTypes, e.Type) {
		return nil, fmt.Errorf("%w: %q, want %q", ErrWrongType, e.Type, wantTypes[0])
	}
	enc, err := hex.DecodeString(e.CborHex)
	if err != nil {
		return nil, fmt.Errorf("%w: cborHex: %w", ErrMalformed, err)
	}
	var raw []byte
	if err := cbor.Unmarshal(enc, &raw); err != nil {
		return nil, fmt.Errorf("%w: cborHex: %w", ErrMalformed, err)
	}
	// Only the canonical encoding of a byte string is accepted: it rules out
	// text strings, indefinite lengths and over-long length headers.
	if again, _ := cbor.Marshal(raw); !bytes.Equal(again, enc) {
		return nil, fmt.Errorf("%w: cborHex is not a canonical CBOR byte string", ErrMalformed)
	}
	if len(raw) != size {
		return nil, fmt.Errorf("%w: %s payload is %d bytes, want %d", ErrWrongLength, e.Type, len(raw), size)
	}
	return raw, nil
}

// isSecret tells a signing key's envelope from a verification key's.
func (e Envelope) isSecret() bool { return strings.Contains(e.Type, "SigningKey") }

// readEnvelope reads and parses a key file.
func readEnvelope(path string) (Envelope, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Envelope{}, fmt.Errorf("keys: %w", err)
	}
	e, err := ParseEnvelope(data)
	if err != nil {
		return Envelope{}, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// writeEnvelope writes a key file atomically: a temporary file in the same
// directory (created 0600, so a secret is never readable by others even for
// a moment), then a rename over path. Public keys are made 0644.
func writeEnvelope(path string, e Envelope) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if !e.isSecret() {
		if err := tmp.Chmod(0o644); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
	}
	if _, err := tmp.Write(e.Marshal()); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	return nil
}
