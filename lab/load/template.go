package load

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"slices"

	"golang.org/x/crypto/blake2b"

	"github.com/leiosnode/leiosnode/ledger"
)

// chainTx is a tx of a chain as the firehose needs it: its bytes, its
// hashes, and the coin of its one output, which the next tx spends.
type chainTx struct {
	raw      []byte
	hash, id [32]byte
	coin     uint64
}

// fromLedger is a tx the ledger built.
func fromLedger(tx *ledger.Tx) *chainTx {
	return &chainTx{raw: tx.Bytes(), hash: tx.Hash(), id: tx.ID(), coin: tx.Outputs[0].Coin}
}

// Bytes is the tx's CBOR; callers must not modify it.
func (t *chainTx) Bytes() []byte { return t.raw }

// Size is its length in bytes.
func (t *chainTx) Size() int { return len(t.raw) }

// Hash is the hash of the whole tx, as blocks name it.
func (t *chainTx) Hash() [32]byte { return t.hash }

// ID is the tx id, the hash of its body, as its outputs are spent.
func (t *chainTx) ID() [32]byte { return t.id }

// txTemplate makes a chain's next plain payment from the bytes of one the
// ledger built, without encoding or decoding anything: a chain's plain
// payments differ only in the input's tx id, the change's coin and the
// signature, while the coin's encoding keeps its width — then the tx keeps
// its size, and so its fee. Building a tx is then two hashes and a
// signature, where the ledger's builder encodes the body several times to
// balance the fee, and decodes the result.
//
// A template is derived from a tx that spent output 0 of its parent, as
// every tx of a chain after its first does; the chain checks the first tx
// a template makes against the ledger's build of it (see txChain.build),
// so that a template that does not make the ledger's bytes is never used.
type txTemplate struct {
	raw     []byte // the tx it was derived from
	bodyEnd int    // the body is raw[1:bodyEnd]
	// inputAt, coinAt and sigAt are where the input's tx id, the change's
	// coin (its CBOR head, then the value) and the signature are in raw.
	inputAt, coinAt, sigAt int
	coinHead               byte
	fee                    uint64
	// checked says the ledger built the same bytes as the template made.
	checked bool
}

// newTemplate derives the template of tx, a plain payment that spent in,
// or says why not: tx is not one spending output 0 to a single output, or
// a field is not where it can be found once and only once.
func newTemplate(tx *ledger.Tx, in ledger.TxIn) (*txTemplate, bool) {
	raw, body := tx.Bytes(), tx.BodyBytes()
	if in.Index != 0 || len(tx.Inputs) != 1 || tx.Inputs[0] != in || len(tx.Outputs) != 1 || len(tx.Witnesses) != 1 ||
		tx.AuxData() != nil || tx.TTL != nil || tx.ValidityStart != nil ||
		len(raw) < 1+len(body) || raw[0] != 0x84 || !bytes.Equal(raw[1:1+len(body)], body) {
		return nil, false
	}
	coin := appendCBORUint(nil, tx.Outputs[0].Coin)
	t := &txTemplate{raw: raw, bodyEnd: 1 + len(body), coinHead: coin[0], fee: tx.Fee}
	var ok [3]bool
	t.inputAt, ok[0] = onlyAt(raw[:t.bodyEnd], in.TxID[:])
	t.coinAt, ok[1] = onlyAt(raw[:t.bodyEnd], coin)
	t.sigAt, ok[2] = onlyAt(raw[t.bodyEnd:], tx.Witnesses[0].Signature[:])
	t.sigAt += t.bodyEnd
	return t, ok == [3]bool{true, true, true}
}

// onlyAt is where sub is in b, if it is there exactly once.
func onlyAt(b, sub []byte) (int, bool) {
	i := bytes.Index(b, sub)
	return i, i >= 0 && bytes.Index(b[i+1:], sub) < 0
}

// next is the tx spending output 0 of the tx with id parent, worth coin,
// signed by key, if the template makes it: its change must encode as wide
// as the template's, and as the coin it spends (the ledger's balancing
// tries the fee against both), and be worth at least minCoin.
func (t *txTemplate) next(parent [32]byte, coin, minCoin uint64, key ed25519.PrivateKey) (*chainTx, bool) {
	if coin < t.fee {
		return nil, false
	}
	change := coin - t.fee
	if change < minCoin || cborUintHead(change) != t.coinHead || cborUintHead(coin) != t.coinHead {
		return nil, false
	}
	raw := slices.Clone(t.raw)
	copy(raw[t.inputAt:], parent[:])
	appendCBORUint(raw[t.coinAt:t.coinAt], change)
	tx := &chainTx{raw: raw, coin: change}
	tx.id = blake2b.Sum256(raw[1:t.bodyEnd])
	copy(raw[t.sigAt:], ed25519.Sign(key, tx.id[:]))
	tx.hash = blake2b.Sum256(raw)
	return tx, true
}

// cborUintHead is the first byte of v's CBOR encoding (major type 0): v
// itself below 24, else the width of what follows.
func cborUintHead(v uint64) byte {
	switch {
	case v < 24:
		return byte(v)
	case v <= 0xff:
		return 0x18
	case v <= 0xffff:
		return 0x19
	case v <= 0xffffffff:
		return 0x1a
	}
	return 0x1b
}

// appendCBORUint appends v's CBOR encoding, the shortest, to b.
func appendCBORUint(b []byte, v uint64) []byte {
	switch head := cborUintHead(v); head {
	case 0x18:
		return append(b, head, byte(v))
	case 0x19:
		return binary.BigEndian.AppendUint16(append(b, head), uint16(v))
	case 0x1a:
		return binary.BigEndian.AppendUint32(append(b, head), uint32(v))
	case 0x1b:
		return binary.BigEndian.AppendUint64(append(b, head), v)
	default:
		return append(b, head)
	}
}
