package block

// Vote is a committee member's vote for the EB announced by an RB:
// `[rb_hash, voter_seat, signature]`, the signature a BLS12-381 MinSig
// signature over the CBOR encoding of rb_hash (0x5820 ‖ rb_hash).
type Vote struct {
	_         struct{} `cbor:",toarray"`
	RbHash    Hash
	VoterSeat uint16
	Signature Bytes48
}

// VoteMessage returns the bytes a vote for rbHash signs: the CBOR byte string
// encoding of the hash.
func VoteMessage(rbHash Hash) []byte { return append([]byte{0x58, 0x20}, rbHash[:]...) }

// Certificate certifies an EB: `[signers, aggregate_signature]`, signers a
// bitfield indexed by committee seat, most significant bit first.
type Certificate struct {
	_                  struct{} `cbor:",toarray"`
	Signers            []byte
	AggregateSignature Bytes48
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
