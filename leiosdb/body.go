package leiosdb

import (
	"fmt"

	"github.com/leiosnode/leiosnode/block"
)

// cipEBBodyHead is the head of the CIP's EB body, an array of one map; a
// map's head is never this byte.
const cipEBBodyHead = 0x81

// storedTxs lists the entries of a stored body. Stored bodies passed
// block.DecodeEBBody on insert, so this only walks the canonical encoding
// (the CIP's one-element array head if there, the map head, then 0x5820 ‖
// hash ‖ uint per entry) without re-validating it: the fetch server reads
// bodies on every request.
func storedTxs(raw []byte) ([]block.EBTx, error) {
	if len(raw) > 0 && raw[0] == cipEBBodyHead {
		raw = raw[1:]
	}
	n, rest, err := block.ReadDefiniteHead(raw, 5)
	if err != nil {
		return nil, fmt.Errorf("%w: stored body: %w", ErrCorrupt, err)
	}
	if n > uint64(len(rest)/(2+hashLen+1)) {
		return nil, fmt.Errorf("%w: stored body: %d entries in %d bytes", ErrCorrupt, n, len(raw))
	}
	txs := make([]block.EBTx, n)
	for i := range txs {
		if len(rest) < 2+hashLen || rest[0] != 0x58 || int(rest[1]) != hashLen {
			return nil, fmt.Errorf("%w: stored body: entry %d", ErrCorrupt, i)
		}
		copy(txs[i].TxHash[:], rest[2:2+hashLen])
		var size uint64
		size, rest, err = block.ReadDefiniteHead(rest[2+hashLen:], 0)
		if err != nil || size > 1<<32-1 {
			return nil, fmt.Errorf("%w: stored body: entry %d size", ErrCorrupt, i)
		}
		txs[i].Size = uint32(size)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: stored body: %d trailing bytes", ErrCorrupt, len(rest))
	}
	return txs, nil
}
