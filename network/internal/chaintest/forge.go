package chaintest

import (
	"crypto/ed25519"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
)

// Forger builds blocks signed by one issuer.
type Forger struct {
	Key ed25519.PrivateKey
}

// NewForger returns a forger with a key derived from seed.
func NewForger(seed byte) Forger {
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	return Forger{Key: ed25519.NewKeyFromSeed(s)}
}

// Block forges the block after parent (nil: the first block) at slot, with
// one transaction-shaped item carrying note, so branches differ.
func (f Forger) Block(parent *block.Block, slot uint64, note string) *block.Block {
	tx, err := block.Marshal(note)
	if err != nil {
		panic(err) // a string always encodes
	}
	body := block.NewBody([]block.RawCBOR{tx}, nil)
	hb := block.HeaderBody{
		BlockNumber: 1,
		Slot:        slot,
		BodySize:    uint64(len(body.Bytes())),
		BodyHash:    body.Hash(),
	}
	copy(hb.IssuerVKey[:], f.Key.Public().(ed25519.PublicKey))
	if parent != nil {
		prev := parent.Hash()
		hb.PrevHash = &prev
		hb.BlockNumber = parent.Header.BlockNumber + 1
	}
	return block.NewBlock(block.NewHeader(hb, f.Key), body)
}

// Extend forges n blocks after parent, one slot apart.
func (f Forger) Extend(parent *block.Block, n int, note string) []*block.Block {
	var slot uint64
	if parent != nil {
		slot = parent.Header.Slot
	}
	blocks := make([]*block.Block, n)
	for i := range blocks {
		slot++
		parent = f.Block(parent, slot, fmt.Sprintf("%s-%d", note, i))
		blocks[i] = parent
	}
	return blocks
}

// Tampered returns b with a different body than its header commits to.
func Tampered(b *block.Block) *block.Block {
	tx, err := block.Marshal("tampered")
	if err != nil {
		panic(err)
	}
	return block.NewBlock(b.Header, block.NewBody([]block.RawCBOR{tx}, nil))
}

// AddAll adds blocks to c (a Chain or a DB) in order.
func AddAll(c interface{ AddBlock(*block.Block) error }, blocks []*block.Block) error {
	for _, b := range blocks {
		if err := c.AddBlock(b); err != nil {
			return err
		}
	}
	return nil
}

// ValidateHeader checks only the issuer's signature: test blocks leave the
// VRF fields zero.
func ValidateHeader(h *block.Header) error { return h.VerifySignature() }
