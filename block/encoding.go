package block

import (
	"errors"
	"fmt"
)

// Encoding is a network's choice of Leios encodings, fixed by its genesis
// (leios.encoding): the shape of an RB header's Leios fields, of an EB
// body and of a certificate, and the message a vote signs. Block and EB
// hashes depend on it, so every node of a network uses the same one,
// whichever protocol set carries the data (docs/protocol.md, "Wire formats").
//
// The zero value is EncodingPrototype: a genesis that names none was written
// before the choice existed, and its blocks were encoded so.
type Encoding uint8

const (
	// EncodingPrototype is the Haskell prototype's shapes: header body
	// `[…, body_hash, leios_certified: bool, [eb_hash, eb_size] / null]`,
	// EB body a bare map, certificate `[signers, aggregate_signature]`,
	// votes signing 0x5820 ‖ rb_hash.
	EncodingPrototype Encoding = iota
	// EncodingCIP is CIP-0164's Appendix B: header body `[…, body_hash,
	// ? (announced_eb, announced_eb_size), ? certified_eb]`, EB body
	// `[omap<hash32, uint16>]`, certificate `[slot_no, eb_hash, signers,
	// aggregated_signature]`, votes signing slot_no (8 bytes, big-endian)
	// ‖ eb_hash.
	EncodingCIP
)

// ErrUnknownEncoding is returned for an encoding name that is neither
// "cip" nor "prototype".
var ErrUnknownEncoding = errors.New(`neither "cip" nor "prototype"`)

// String is the encoding's name in a genesis: "cip" or "prototype".
func (e Encoding) String() string {
	switch e {
	case EncodingPrototype:
		return "prototype"
	case EncodingCIP:
		return "cip"
	}
	return fmt.Sprintf("Encoding(%d)", uint8(e))
}

// ParseEncoding reads an encoding's name.
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "prototype":
		return EncodingPrototype, nil
	case "cip":
		return EncodingCIP, nil
	}
	return 0, fmt.Errorf("%q is %w", s, ErrUnknownEncoding)
}

// MarshalText writes the encoding's name.
func (e Encoding) MarshalText() ([]byte, error) {
	if e != EncodingPrototype && e != EncodingCIP {
		return nil, fmt.Errorf("%s is %w", e, ErrUnknownEncoding)
	}
	return []byte(e.String()), nil
}

// UnmarshalText reads the encoding's name.
func (e *Encoding) UnmarshalText(b []byte) error {
	v, err := ParseEncoding(string(b))
	if err != nil {
		return err
	}
	*e = v
	return nil
}
