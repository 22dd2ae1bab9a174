package block

import "fmt"

// Certificate certifies an EB: the committee seats that signed (a bitfield
// indexed by seat, the first seat in the most significant bit of byte 0)
// and the aggregate of their signatures. Its shape is its Encoding's:
//
//	prototype: [signers, aggregate_signature]
//	CIP:       [slot_no, endorser_block_hash, signers, aggregated_signature]
//
// The CIP's names the EB it certifies, by the announcing RB's slot and
// the EB's hash; the prototype's leaves it to the CertRB's parent, so Slot
// and EbHash are zero in it.
type Certificate struct {
	Slot               uint64 // the announcing RB's; CIP only
	EbHash             Hash   // CIP only
	Signers            []byte
	AggregateSignature Bytes48
	// Encoding is the shape the certificate is (or was) encoded in: chosen
	// by whoever builds it, found by decoding. That it is the network's
	// is consensus's to check.
	Encoding Encoding
}

type prototypeCertificate struct {
	_                  struct{} `cbor:",toarray"`
	Signers            []byte
	AggregateSignature Bytes48
}

type cipCertificate struct {
	_                  struct{} `cbor:",toarray"`
	Slot               uint64
	EbHash             Hash
	Signers            []byte
	AggregateSignature Bytes48
}

// MarshalCBOR encodes the certificate in its Encoding's shape.
func (c *Certificate) MarshalCBOR() ([]byte, error) {
	if c.Encoding == EncodingCIP {
		return encMode.Marshal(cipCertificate{Slot: c.Slot, EbHash: c.EbHash, Signers: c.Signers, AggregateSignature: c.AggregateSignature})
	}
	return encMode.Marshal(prototypeCertificate{Signers: c.Signers, AggregateSignature: c.AggregateSignature})
}

// UnmarshalCBOR decodes either shape, told apart by their length, and
// records which it was.
func (c *Certificate) UnmarshalCBOR(data []byte) error {
	var items []RawCBOR
	if err := decMode.Unmarshal(data, &items); err != nil {
		return fmt.Errorf("certificate: %w", err)
	}
	switch len(items) {
	case 2:
		var w prototypeCertificate
		if err := decMode.Unmarshal(data, &w); err != nil {
			return fmt.Errorf("certificate: %w", err)
		}
		*c = Certificate{Signers: w.Signers, AggregateSignature: w.AggregateSignature, Encoding: EncodingPrototype}
	case 4:
		var w cipCertificate
		if err := decMode.Unmarshal(data, &w); err != nil {
			return fmt.Errorf("certificate: %w", err)
		}
		*c = Certificate{Slot: w.Slot, EbHash: w.EbHash, Signers: w.Signers, AggregateSignature: w.AggregateSignature, Encoding: EncodingCIP}
	default:
		return fmt.Errorf("certificate: %d fields, want 4 (CIP) or 2 (prototype)", len(items))
	}
	if c.Signers == nil {
		c.Signers = []byte{}
	}
	return nil
}

// HasSigner reports whether seat's bit is set in the signers bitfield.
func (c *Certificate) HasSigner(seat int) bool {
	i := seat / 8
	if seat < 0 || i >= len(c.Signers) {
		return false
	}
	return c.Signers[i]&(0x80>>(seat%8)) != 0
}

// SetSigner sets seat's bit, growing the bitfield as needed.
func (c *Certificate) SetSigner(seat int) {
	for len(c.Signers) <= seat/8 {
		c.Signers = append(c.Signers, 0)
	}
	c.Signers[seat/8] |= 0x80 >> (seat % 8)
}
