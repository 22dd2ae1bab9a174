package block

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// ErrInvalidEB is wrapped by every reason an EB body is rejected.
var ErrInvalidEB = errors.New("block: invalid EB body")

// EBLimits are a network's rules for an endorser block: its bounds and its
// encoding. The zero value is not useful; start from DefaultEBLimits.
type EBLimits struct {
	MaxBodyBytes    int // encoded EB body; 512 KiB
	MaxClosureBytes int // sum of tx sizes; prototype 12,000,000
	MaxTxs          int // prototype 13,888
	// Encoding is the body's shape (EBBody), the network's: a body in the
	// other is invalid, since the EB hash is the hash of these bytes.
	Encoding Encoding
}

// DefaultEBLimits are the Leios prototype's values, with the body limit at
// 512 KiB rather than 500,000 bytes: a full EB of 13,888 txs averaging 864
// bytes (12 MB) has 37-byte entries, a 513,860-byte body, which the three
// limits together must admit. The encoding is the CIP's, a new genesis's.
var DefaultEBLimits = EBLimits{MaxBodyBytes: 524_288, MaxClosureBytes: 12_000_000, MaxTxs: 13_888, Encoding: EncodingCIP}

// EBTx is one entry of an EB body: the hash of a whole serialized
// transaction and its size in bytes.
type EBTx struct {
	TxHash Hash
	Size   uint32
}

// EBBody is an endorser block's body: its txs in order. Its encoding, which
// is what is hashed, is a definite-length map { bytes32 tx_hash => uint
// tx_size } in EB order: bare in the prototype's encoding, wrapped in a
// one-element array in the CIP's (`[omap<hash32, uint16>]`, so a tx size
// is at most 65,535 there).
type EBBody struct {
	Txs []EBTx

	raw  []byte
	hash Hash
}

// NewEBBody encodes txs as an EB body. It checks the body like a received
// one, so a forger cannot build what peers would reject.
func NewEBBody(txs []EBTx, limits EBLimits) (*EBBody, error) {
	raw := encodeEBBody(txs, limits.Encoding)
	eb, err := DecodeEBBody(raw, limits)
	if err != nil {
		return nil, err
	}
	return eb, nil
}

// DecodeEBBody decodes and validates an EB body: in the limits' encoding,
// canonical (the bytes re-encode to themselves), no duplicate tx hash,
// within limits.
func DecodeEBBody(data []byte, limits EBLimits) (*EBBody, error) {
	if len(data) > limits.MaxBodyBytes {
		return nil, fmt.Errorf("%w: %d bytes exceeds %d", ErrInvalidEB, len(data), limits.MaxBodyBytes)
	}
	rest, maxSize := data, uint64(math.MaxUint32)
	if limits.Encoding == EncodingCIP {
		n, r, err := ReadDefiniteHead(rest, 4) // major type 4: array
		if err != nil || n != 1 {
			return nil, fmt.Errorf("%w: not the CIP's one-element array around the map", ErrInvalidEB)
		}
		rest, maxSize = r, math.MaxUint16
	}
	n, rest, err := ReadDefiniteHead(rest, 5) // major type 5: map
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidEB, err)
	}
	if n > uint64(limits.MaxTxs) {
		return nil, fmt.Errorf("%w: %d txs exceeds %d", ErrInvalidEB, n, limits.MaxTxs)
	}
	txs := make([]EBTx, n)
	seen := make(map[Hash]struct{}, n)
	var closure uint64
	for i := range txs {
		var l, size uint64
		l, rest, err = ReadDefiniteHead(rest, 2) // byte string
		if err != nil || l != 32 || len(rest) < 32 {
			return nil, fmt.Errorf("%w: entry %d: tx hash is not a 32-byte string", ErrInvalidEB, i)
		}
		copy(txs[i].TxHash[:], rest[:32])
		size, rest, err = ReadDefiniteHead(rest[32:], 0) // unsigned int
		if err != nil || size > maxSize {
			return nil, fmt.Errorf("%w: entry %d: bad tx size", ErrInvalidEB, i)
		}
		txs[i].Size = uint32(size)
		if _, dup := seen[txs[i].TxHash]; dup {
			return nil, fmt.Errorf("%w: duplicate tx %s", ErrInvalidEB, txs[i].TxHash.Short())
		}
		seen[txs[i].TxHash] = struct{}{}
		closure += size
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrInvalidEB, len(rest))
	}
	if closure > uint64(limits.MaxClosureBytes) {
		return nil, fmt.Errorf("%w: closure %d bytes exceeds %d", ErrInvalidEB, closure, limits.MaxClosureBytes)
	}
	if !bytes.Equal(encodeEBBody(txs, limits.Encoding), data) {
		return nil, fmt.Errorf("%w: non-canonical encoding", ErrInvalidEB)
	}
	return &EBBody{Txs: txs, raw: append([]byte(nil), data...), hash: HashBytes(data)}, nil
}

// Bytes returns the body's encoding.
func (eb *EBBody) Bytes() []byte { return eb.raw }

// Hash is the EB hash: Blake2b-256 of the body bytes.
func (eb *EBBody) Hash() Hash { return eb.hash }

// Size is the announced EB size: the length of the body bytes.
func (eb *EBBody) Size() uint64 { return uint64(len(eb.raw)) }

// ClosureSize is the sum of the sizes of its txs.
func (eb *EBBody) ClosureSize() uint64 {
	var n uint64
	for _, tx := range eb.Txs {
		n += uint64(tx.Size)
	}
	return n
}

// Announcement is what an RB header carries to announce this EB.
func (eb *EBBody) Announcement() Announcement {
	return Announcement{EbHash: eb.hash, EbSize: eb.Size()}
}

func (eb *EBBody) MarshalCBOR() ([]byte, error) { return eb.raw, nil }

func encodeEBBody(txs []EBTx, enc Encoding) []byte {
	buf := make([]byte, 0, 10+len(txs)*40)
	if enc == EncodingCIP {
		buf = AppendHead(buf, 4, 1)
	}
	buf = AppendHead(buf, 5, uint64(len(txs)))
	for _, tx := range txs {
		buf = append(buf, 0x58, 0x20)
		buf = append(buf, tx.TxHash[:]...)
		buf = AppendHead(buf, 0, uint64(tx.Size))
	}
	return buf
}
