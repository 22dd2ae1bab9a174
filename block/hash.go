package block

import (
	"encoding/hex"
	"fmt"

	"github.com/fxamacker/cbor/v2"
	"golang.org/x/crypto/blake2b"
)

// Hash is a Blake2b-256 digest: block hashes, EB hashes, tx hashes.
type Hash [32]byte

// HashBytes returns the Blake2b-256 digest of b.
func HashBytes(b []byte) Hash { return blake2b.Sum256(b) }

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Short is the first 8 hex digits, for logs and status lines.
func (h Hash) Short() string { return hex.EncodeToString(h[:4]) }

// IsZero reports whether h is the all-zero hash.
func (h Hash) IsZero() bool { return h == Hash{} }

// ParseHash parses 64 hex digits.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("block: %q is not a 32-byte hex hash", s)
	}
	copy(h[:], b)
	return h, nil
}

func (h Hash) MarshalCBOR() ([]byte, error) { return encMode.Marshal(h[:]) }

func (h *Hash) UnmarshalCBOR(data []byte) error { return decodeFixed(data, h[:], "hash") }

// decodeFixed decodes a CBOR byte string of exactly len(dst) bytes.
func decodeFixed(data []byte, dst []byte, what string) error {
	var b []byte
	if err := decMode.Unmarshal(data, &b); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if len(b) != len(dst) {
		return fmt.Errorf("%s: want %d bytes, got %d", what, len(dst), len(b))
	}
	copy(dst, b)
	return nil
}

// Bytes32 is a fixed 32-byte string (verification keys).
type Bytes32 [32]byte

func (b Bytes32) MarshalCBOR() ([]byte, error) { return encMode.Marshal(b[:]) }
func (b *Bytes32) UnmarshalCBOR(data []byte) error {
	return decodeFixed(data, b[:], "bytes32")
}

// Bytes48 is a fixed 48-byte string (BLS signatures).
type Bytes48 [48]byte

func (b Bytes48) MarshalCBOR() ([]byte, error) { return encMode.Marshal(b[:]) }
func (b *Bytes48) UnmarshalCBOR(data []byte) error {
	return decodeFixed(data, b[:], "bytes48")
}

// Bytes64 is a fixed 64-byte string (ed25519 signatures, VRF outputs).
type Bytes64 [64]byte

func (b Bytes64) MarshalCBOR() ([]byte, error) { return encMode.Marshal(b[:]) }
func (b *Bytes64) UnmarshalCBOR(data []byte) error {
	return decodeFixed(data, b[:], "bytes64")
}

// Bytes80 is a fixed 80-byte string (VRF proofs).
type Bytes80 [80]byte

func (b Bytes80) MarshalCBOR() ([]byte, error) { return encMode.Marshal(b[:]) }
func (b *Bytes80) UnmarshalCBOR(data []byte) error {
	return decodeFixed(data, b[:], "bytes80")
}

var (
	_ cbor.Marshaler   = Hash{}
	_ cbor.Unmarshaler = (*Hash)(nil)
)
