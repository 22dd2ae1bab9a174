package block

import (
	"errors"
	"fmt"
)

// ErrBodyMismatch is returned when a block body's hash or size differs from
// what its header commits to.
var ErrBodyMismatch = errors.New("block: body does not match header")

// Body is `[[* transaction], leios_certificate / null]`. Transactions stay
// raw CBOR here; the ledger decodes and validates them.
type Body struct {
	Txs         []RawCBOR
	Certificate *Certificate

	raw []byte
}

type bodyWire struct {
	_           struct{} `cbor:",toarray"`
	Txs         []RawCBOR
	Certificate *Certificate
}

// NewBody encodes a body from raw transactions and an optional certificate.
func NewBody(txs []RawCBOR, cert *Certificate) *Body {
	if txs == nil {
		txs = []RawCBOR{}
	}
	return &Body{Txs: txs, Certificate: cert, raw: mustMarshal(bodyWire{Txs: txs, Certificate: cert})}
}

// DecodeBody decodes a block body and keeps its bytes.
func DecodeBody(data []byte) (*Body, error) {
	var w bodyWire
	if err := Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	return &Body{Txs: w.Txs, Certificate: w.Certificate, raw: append([]byte(nil), data...)}, nil
}

// Bytes returns the body's original encoding.
func (b *Body) Bytes() []byte { return b.raw }

// Hash is Blake2b-256 of the body bytes.
func (b *Body) Hash() Hash { return HashBytes(b.raw) }

func (b *Body) MarshalCBOR() ([]byte, error) { return b.raw, nil }

func (b *Body) UnmarshalCBOR(data []byte) error {
	d, err := DecodeBody(data)
	if err != nil {
		return err
	}
	*b = *d
	return nil
}

// Block is `[header, body]`: a ranking block.
type Block struct {
	Header *Header
	Body   *Body

	raw []byte
}

type blockWire struct {
	_      struct{} `cbor:",toarray"`
	Header RawCBOR
	Body   RawCBOR
}

// NewBlock assembles a block from a header and the body it commits to.
func NewBlock(h *Header, b *Body) *Block {
	return &Block{Header: h, Body: b, raw: mustMarshal(blockWire{Header: h.raw, Body: b.raw})}
}

// DecodeBlock decodes a block, keeping the bytes of it, its header and its
// body. It does not check that the body matches the header: see CheckBody.
func DecodeBlock(data []byte) (*Block, error) {
	var w blockWire
	if err := Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("block: %w", err)
	}
	h, err := DecodeHeader(w.Header)
	if err != nil {
		return nil, err
	}
	b, err := DecodeBody(w.Body)
	if err != nil {
		return nil, err
	}
	return &Block{Header: h, Body: b, raw: append([]byte(nil), data...)}, nil
}

// Bytes returns the block's encoding.
func (b *Block) Bytes() []byte { return b.raw }

// Hash is the block hash (the header's hash).
func (b *Block) Hash() Hash { return b.Header.Hash() }

// Point is (slot, block hash).
func (b *Block) Point() Point { return b.Header.Point() }

// CheckBody verifies that the body's size and hash are those in the header.
func (b *Block) CheckBody() error {
	h := b.Header
	if uint64(len(b.Body.raw)) != h.BodySize {
		return fmt.Errorf("%w: size %d, header says %d", ErrBodyMismatch, len(b.Body.raw), h.BodySize)
	}
	if got := b.Body.Hash(); got != h.BodyHash {
		return fmt.Errorf("%w: hash %s, header says %s", ErrBodyMismatch, got.Short(), h.BodyHash.Short())
	}
	return nil
}

func (b *Block) MarshalCBOR() ([]byte, error) { return b.raw, nil }

func (b *Block) UnmarshalCBOR(data []byte) error {
	d, err := DecodeBlock(data)
	if err != nil {
		return err
	}
	*b = *d
	return nil
}
