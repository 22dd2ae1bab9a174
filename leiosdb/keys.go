package leiosdb

import (
	"encoding/binary"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
)

// Keyspace prefixes. The layout is described in doc.go; changing it needs a
// new schemaVersion.
const (
	prefixPoint     = 'p' // slot ‖ eb_hash → pointRecord
	prefixVolatile  = 'v' // slot ‖ eb_hash → ∅
	prefixByHash    = 'h' // eb_hash ‖ slot → ∅
	prefixBody      = 'b' // eb_hash → body bytes
	prefixBodyState = 'c' // eb_hash → bodyState
	prefixTx        = 'x' // tx_hash → tx bytes
	prefixPin       = 'r' // tx_hash → ∅: a promoted body names the tx
	prefixTxRef     = 't' // schemas 1 and 2 only: tx_hash → refcount, size (now in memory)
	prefixWant      = 'w' // schema 1 only: tx_hash ‖ eb_hash → offset, size (now in memory)
	prefixMeta      = 'm'
)

// schemaVersion 3 keeps what the volatile window's txs need in memory
// (txIndex) and pins the certified closures' txs ('r'); Open migrates a
// store of schema 1 or 2 (migrate).
const schemaVersion = 3

var (
	schemaKey  = []byte{prefixMeta, 's', 'c', 'h', 'e', 'm', 'a'}
	networkKey = []byte{prefixMeta, 'n', 'e', 't'} // pebblestore's stamp
)

const (
	hashLen  = len(block.Hash{})
	pointLen = 1 + 8 + hashLen
)

// pointKey is 'p' or 'v' ‖ slot (big-endian, so keys sort by slot) ‖ eb_hash.
func pointKey(prefix byte, p block.Point) []byte {
	k := make([]byte, pointLen)
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:9], p.Slot)
	copy(k[9:], p.Hash[:])
	return k
}

// slotBound is the smallest 'p' or 'v' key of the given slot.
func slotBound(prefix byte, slot uint64) []byte {
	k := make([]byte, 9)
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:], slot)
	return k
}

func parsePointKey(k []byte) block.Point {
	var p block.Point
	p.Slot = binary.BigEndian.Uint64(k[1:9])
	copy(p.Hash[:], k[9:])
	return p
}

func byHashKey(p block.Point) []byte {
	k := make([]byte, pointLen)
	k[0] = prefixByHash
	copy(k[1:], p.Hash[:])
	binary.BigEndian.PutUint64(k[1+hashLen:], p.Slot)
	return k
}

func parseByHashKey(k []byte) block.Point {
	var p block.Point
	copy(p.Hash[:], k[1:1+hashLen])
	p.Slot = binary.BigEndian.Uint64(k[1+hashLen:])
	return p
}

// hashKey is prefix ‖ hash: bodies, body states, tx refs, txs, and the
// prefix of 'h' ranges.
func hashKey(prefix byte, h block.Hash) []byte {
	k := make([]byte, 1+hashLen)
	k[0] = prefix
	copy(k[1:], h[:])
	return k
}

// prefixEnd is the exclusive upper bound of all keys starting with prefix.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // all 0xff: no upper bound
}

// pointRecord is the value of a 'p' key.
type pointRecord struct {
	EbSize   uint64
	Promoted bool
}

func (r pointRecord) encode() []byte {
	b := binary.AppendUvarint(nil, r.EbSize)
	var flags byte
	if r.Promoted {
		flags |= 1
	}
	return append(b, flags)
}

func decodePointRecord(v []byte) (pointRecord, error) {
	size, n := binary.Uvarint(v)
	if n <= 0 || len(v) != n+1 || v[n]&^1 != 0 {
		return pointRecord{}, fmt.Errorf("%w: point record %x", ErrCorrupt, v)
	}
	return pointRecord{EbSize: size, Promoted: v[n]&1 != 0}, nil
}

// bodyState is the value of a 'c' key: the state of a held body.
type bodyState struct {
	Missing  uint64 // txs of its closure not stored
	BodySize uint64 // length of the body bytes, so size checks need not read them
}

func (s bodyState) encode() []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, s.Missing), s.BodySize)
}

func decodeBodyState(v []byte) (bodyState, error) {
	a, b, err := decodeUvarintPair(v)
	if err != nil {
		return bodyState{}, fmt.Errorf("%w: body state: %w", ErrCorrupt, err)
	}
	return bodyState{Missing: a, BodySize: b}, nil
}

func decodeUvarintPair(v []byte) (uint64, uint64, error) {
	a, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, 0, fmt.Errorf("bad varint in %x", v)
	}
	b, m := binary.Uvarint(v[n:])
	if m <= 0 || n+m != len(v) {
		return 0, 0, fmt.Errorf("bad varint in %x", v)
	}
	return a, b, nil
}
