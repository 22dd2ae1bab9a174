package block

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// RawCBOR is one undecoded CBOR item, kept byte for byte.
type RawCBOR = cbor.RawMessage

// ErrBadSignature is returned when a header's issuer signature does not verify.
var ErrBadSignature = errors.New("block: bad header signature")

// VRFResult is a VRF output and the proof that produced it: `[output, proof]`.
type VRFResult struct {
	_      struct{} `cbor:",toarray"`
	Output Bytes64
	Proof  Bytes80
}

// Announcement is an RB header's announcement of an endorser block:
// `[eb_hash, eb_size]`.
type Announcement struct {
	_      struct{} `cbor:",toarray"`
	EbHash Hash
	EbSize uint64
}

// HeaderBody is the signed part of a ranking-block header. Its Leios
// fields — the certified flag and the announcement — are encoded as
// Encoding says (encodeHeaderBody); the eight before them are the same in
// both encodings.
type HeaderBody struct {
	BlockNumber    uint64
	Slot           uint64
	PrevHash       *Hash // nil for the first block after origin
	IssuerVKey     Bytes32
	VRFVKey        Bytes32
	VRF            VRFResult
	BodySize       uint64
	BodyHash       Hash
	LeiosCertified bool
	Announcement   *Announcement
	// Encoding is the shape the body is (or was) encoded in: chosen by
	// whoever builds it, found by DecodeHeader. That it is the network's
	// is consensus's to check.
	Encoding Encoding
}

// Header is `[header_body, signature]`, kept with its original bytes.
type Header struct {
	HeaderBody
	Signature Bytes64

	raw     []byte // the whole header as received or built
	bodyRaw []byte // the header_body item inside raw: what the issuer signed
	hash    Hash
}

type headerWire struct {
	_         struct{} `cbor:",toarray"`
	Body      RawCBOR
	Signature Bytes64
}

// NewHeader encodes hb, signs it with the issuer's key and returns the header.
// The signing key must match hb.IssuerVKey.
func NewHeader(hb HeaderBody, issuer ed25519.PrivateKey) *Header {
	bodyRaw := encodeHeaderBody(hb)
	var sig Bytes64
	copy(sig[:], ed25519.Sign(issuer, bodyRaw))
	raw := mustMarshal(headerWire{Body: bodyRaw, Signature: sig})
	return &Header{HeaderBody: hb, Signature: sig, raw: raw, bodyRaw: bodyRaw, hash: HashBytes(raw)}
}

// DecodeHeader decodes a header and keeps its bytes.
func DecodeHeader(data []byte) (*Header, error) {
	var w headerWire
	if err := Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	hb, err := decodeHeaderBody(w.Body)
	if err != nil {
		return nil, fmt.Errorf("header body: %w", err)
	}
	h := &Header{HeaderBody: hb, Signature: w.Signature}
	h.raw = append([]byte(nil), data...)
	h.bodyRaw = append([]byte(nil), w.Body...)
	h.hash = HashBytes(h.raw)
	return h, nil
}

// Bytes returns the header's original encoding. Callers must not modify it.
func (h *Header) Bytes() []byte { return h.raw }

// SignedBytes returns the header_body bytes the issuer signed.
func (h *Header) SignedBytes() []byte { return h.bodyRaw }

// Hash is the block hash: Blake2b-256 of the header bytes.
func (h *Header) Hash() Hash { return h.hash }

// Point is (slot, block hash).
func (h *Header) Point() Point { return Point{Slot: h.Slot, Hash: h.hash} }

// Prev returns the predecessor's hash, or the zero hash after origin.
func (h *Header) Prev() Hash {
	if h.PrevHash == nil {
		return Hash{}
	}
	return *h.PrevHash
}

// VerifySignature checks the issuer's ed25519 signature over the header body.
func (h *Header) VerifySignature() error {
	if !ed25519.Verify(ed25519.PublicKey(h.IssuerVKey[:]), h.bodyRaw, h.Signature[:]) {
		return fmt.Errorf("%w: block %d slot %d", ErrBadSignature, h.BlockNumber, h.Slot)
	}
	return nil
}

func (h *Header) MarshalCBOR() ([]byte, error) { return h.raw, nil }

func (h *Header) UnmarshalCBOR(data []byte) error {
	d, err := DecodeHeader(data)
	if err != nil {
		return err
	}
	*h = *d
	return nil
}
