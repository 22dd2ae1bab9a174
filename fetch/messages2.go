package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Message tags of /leios/fetch/2, CIP-0164's LeiosFetch. The CIP gives
// the messages, not their tags: these are the CIP's table order.
const (
	TagMultiBlockRequest uint64 = 0
	TagMultiBlock        uint64 = 1
	TagNoMoreBlocks      uint64 = 2
	TagTxsRequest2       uint64 = 3
	TagTxs2              uint64 = 4
	TagDone2             uint64 = 5
)

// MaxBlocksPerRequest bounds the EB hashes of one MsgLeiosMultiBlockRequest.
const MaxBlocksPerRequest = 8

// MaxWholeInFlight is how many multi-block requests the decision logic
// keeps in flight to one peer: the next is asked for while the last is
// still arriving, so the peer's link never waits on a round trip.
const MaxWholeInFlight = 2

// MsgMultiBlockRequest `[0, [+ eb_hash]]` (MsgLeiosMultiBlockRequest) asks
// for EBs whole: each body and every tx it names.
type MsgMultiBlockRequest struct {
	_        struct{} `cbor:",toarray"`
	EbHashes []block.Hash
}

// MsgMultiBlock `[1, endorser_block, [* tx]]` (MsgLeiosBlock) is one EB
// of a multi-block request, in the request's order: its body as hashed
// (the network's encoding: the CIP's `[omap<hash32, uint16>]` or the
// prototype's bare map), and all its txs in EB order.
type MsgMultiBlock struct {
	_    struct{} `cbor:",toarray"`
	Body block.RawCBOR
	Txs  TxList
}

// MsgNoMoreBlocks `[2]` (MsgLeiosNoMoreBlocks) ends the answer to a
// multi-block request.
type MsgNoMoreBlocks struct {
	_ struct{} `cbor:",toarray"`
}

// MsgTxsRequest2 `[3, eb_hash, tx_bitmap]` (MsgLeiosBlockTxsRequest) asks
// for the txs of an EB by offset; an empty bitmap asks for the EB body
// itself, as the CIP has it.
type MsgTxsRequest2 struct {
	_      struct{} `cbor:",toarray"`
	EbHash block.Hash
	Bitmap TxBitmap
}

// MsgTxs2 `[4, [* tx]]` (MsgLeiosBlockTxs) answers a txs request: the txs
// in ascending offset order, or for an empty bitmap one item, the EB
// body's bytes wrapped in a byte string.
type MsgTxs2 struct {
	_   struct{} `cbor:",toarray"`
	Txs TxList
}

// MsgDone2 `[5]` ends the protocol.
type MsgDone2 struct {
	_ struct{} `cbor:",toarray"`
}

func (*MsgMultiBlockRequest) Tag() uint64 { return TagMultiBlockRequest }
func (*MsgMultiBlock) Tag() uint64        { return TagMultiBlock }
func (*MsgNoMoreBlocks) Tag() uint64      { return TagNoMoreBlocks }
func (*MsgTxsRequest2) Tag() uint64       { return TagTxsRequest2 }
func (*MsgTxs2) Tag() uint64              { return TagTxs2 }
func (*MsgDone2) Tag() uint64             { return TagDone2 }

// Validate bounds the request: at least one hash, at most
// MaxBlocksPerRequest, none twice.
func (m *MsgMultiBlockRequest) Validate() error {
	if len(m.EbHashes) == 0 || len(m.EbHashes) > MaxBlocksPerRequest {
		return fmt.Errorf("multi-block request of %d EBs, want 1 to %d", len(m.EbHashes), MaxBlocksPerRequest)
	}
	seen := make(map[block.Hash]bool, len(m.EbHashes))
	for _, h := range m.EbHashes {
		if seen[h] {
			return fmt.Errorf("multi-block request names %s twice", h.Short())
		}
		seen[h] = true
	}
	return nil
}

// Validate rejects a body that is neither a map nor an array, or not
// definite-length, as MsgBlock.
func (m *MsgMultiBlock) Validate() error { return (&MsgBlock{Body: m.Body}).Validate() }

var (
	_ protocol.Validator = (*MsgMultiBlockRequest)(nil)
	_ protocol.Validator = (*MsgMultiBlock)(nil)
)

// TxBitmap is CIP-0164's tx bitmap: a byte string of 9-octet chunks, octet
// 0 the chunk index C and octets 1–8 the 64-bit mask of txs 64·C …
// 64·C+63, big-endian, its most significant bit tx 64·C (as the
// prototype's windows). Chunks strictly ascending and no zero mask, as
// Bitmaps; the CIP is silent on both, and either would let a request
// repeat or pad itself. An 8-bit C reaches tx 16,383, beyond any EB
// within the limits (13,888 txs).
type TxBitmap Bitmaps

// maxChunk is the last chunk index a TxBitmap can name.
const maxChunk = 0xff

// MarshalCBOR writes the byte string.
func (bm TxBitmap) MarshalCBOR() ([]byte, error) {
	raw := make([]byte, 0, 9*len(bm))
	for _, w := range bm {
		if w.Index > maxChunk {
			return nil, fmt.Errorf("%w: chunk %d beyond 8 bits", ErrBitmaps, w.Index)
		}
		raw = binary.BigEndian.AppendUint64(append(raw, byte(w.Index)), w.Mask)
	}
	if err := Bitmaps(bm).Validate(); err != nil {
		return nil, err
	}
	return block.Marshal(raw)
}

// UnmarshalCBOR reads the byte string strictly; anything malformed wraps
// ErrBitmaps.
func (bm *TxBitmap) UnmarshalCBOR(data []byte) error {
	var raw []byte
	if len(data) == 0 || data[0]>>5 != majorBytes {
		return fmt.Errorf("%w: not a byte string", ErrBitmaps)
	}
	if err := block.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("%w: %w", ErrBitmaps, err)
	}
	if canon, _ := block.Marshal(raw); !bytes.Equal(canon, data) {
		return fmt.Errorf("%w: %w: the byte string's head", ErrBitmaps, protocol.ErrNonMinimal)
	}
	if len(raw)%9 != 0 {
		return fmt.Errorf("%w: %d bytes, not whole 9-octet chunks", ErrBitmaps, len(raw))
	}
	out := make(TxBitmap, 0, len(raw)/9)
	for ; len(raw) > 0; raw = raw[9:] {
		out = append(out, Window{Index: uint16(raw[0]), Mask: binary.BigEndian.Uint64(raw[1:9])})
	}
	if err := Bitmaps(out).Validate(); err != nil {
		return err
	}
	*bm = out
	return nil
}

// txBitmapOf packs strictly ascending offsets into chunks.
func txBitmapOf(offsets []int) (TxBitmap, error) {
	bm, err := BitmapsOf(offsets)
	if err != nil {
		return nil, err
	}
	if len(bm) > 0 && bm[len(bm)-1].Index > maxChunk {
		return nil, fmt.Errorf("%w: offset %d beyond chunk %d", ErrBitmaps, offsets[len(offsets)-1], maxChunk)
	}
	return TxBitmap(bm), nil
}

// errNotOneBody: a reply to a body request is one wrapped body.
var errNotOneBody = errors.New("a body reply is not one item")
