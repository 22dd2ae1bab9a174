package leiosdb

import (
	"encoding/binary"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
)

// storedTxs lists the entries of a stored body. Stored bodies passed
// block.DecodeEBBody on insert, so this only walks the canonical encoding
// (map head, then 0x5820 ‖ hash ‖ uint per entry) without re-validating it:
// the fetch server reads bodies on every request.
func storedTxs(raw []byte) ([]block.EBTx, error) {
	n, rest, err := cborHead(raw, 5)
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
		size, rest, err = cborHead(rest[2+hashLen:], 0)
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

// cborHead reads one definite-length head of the given major type.
func cborHead(b []byte, major byte) (uint64, []byte, error) {
	if len(b) == 0 || b[0]>>5 != major {
		return 0, nil, fmt.Errorf("want major type %d", major)
	}
	info := b[0] & 0x1f
	b = b[1:]
	var width int
	switch {
	case info < 24:
		return uint64(info), b, nil
	case info == 24:
		width = 1
	case info == 25:
		width = 2
	case info == 26:
		width = 4
	case info == 27:
		width = 8
	default:
		return 0, nil, fmt.Errorf("indefinite or reserved length")
	}
	if len(b) < width {
		return 0, nil, fmt.Errorf("truncated head")
	}
	var buf [8]byte
	copy(buf[8-width:], b[:width])
	return binary.BigEndian.Uint64(buf[:]), b[width:], nil
}
