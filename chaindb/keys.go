package chaindb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
)

// Key layout: one prefix byte per keyspace.
//
//	b ‖ hash              → block bytes            every stored block
//	n ‖ number (8, BE)    → hash                   the selected chain
//	v ‖ number ‖ hash     → (empty)                stored blocks after the immutable tip
//	u ‖ TxIn.Key          → ledger.EncodeTxOut     the backing store: UTxO at the immutable tip
//	a ‖ uvarint(len(address)) ‖ address ‖ TxIn.Key
//	                      → coin (8, BE)           the backing store's outputs by address (address.go)
//	m ‖ name              → marker                 tip, immutable tip, txs through it, network (pebblestore), address index
const (
	prefixBlock    = 'b'
	prefixNumber   = 'n'
	prefixVolatile = 'v'
	prefixUTxO     = 'u'
	prefixAddress  = 'a'
	prefixMeta     = 'm'
)

var (
	keyTip              = []byte{prefixMeta, 't'}
	keyImmutable        = []byte{prefixMeta, 'i'}
	keyImmutableTxs     = []byte{prefixMeta, 'x'} // 8 bytes, big-endian
	keyImmutableCertRBs = []byte{prefixMeta, 'c'} // 8 bytes, big-endian
	keyNetwork          = []byte{prefixMeta, 'n'}
	keyAddressIndex     = []byte{prefixMeta, 'a'} // present once the address index is complete
)

func blockKey(h block.Hash) []byte { return append([]byte{prefixBlock}, h[:]...) }

func numberKey(n uint64) []byte { return binary.BigEndian.AppendUint64([]byte{prefixNumber}, n) }

func volatileKey(n uint64, h block.Hash) []byte {
	return append(binary.BigEndian.AppendUint64([]byte{prefixVolatile}, n), h[:]...)
}

func utxoKey(in ledger.TxIn) []byte {
	k := in.Key()
	return append([]byte{prefixUTxO}, k[:]...)
}

// prefixBounds returns iterator bounds covering every key with this prefix.
func prefixBounds(prefix byte) *pebble.IterOptions {
	return &pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}}
}

// get returns a copy of the value at key, or ok=false if there is none.
func get(r reader, key []byte) (val []byte, ok bool, err error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer closer.Close()
	return bytes.Clone(v), true, nil
}

// reader is what *pebble.DB and *pebble.Snapshot have in common that we use.
type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

func encodeTip(t block.Tip) []byte {
	b, err := block.Marshal(t)
	if err != nil {
		panic(fmt.Sprintf("chaindb: encoding tip: %v", err)) // a Tip always encodes
	}
	return b
}

func decodeTip(b []byte) (block.Tip, error) {
	var t block.Tip
	if err := block.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("chaindb: tip marker: %w", err)
	}
	return t, nil
}

func encodeCount(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func decodeCount(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("chaindb: count marker of %d bytes", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}
