package block

import (
	"errors"
	"fmt"
)

// CBOR heads, for the codecs that must see an item's exact encoding — the
// EB body map in wire order, LeiosFetch's indefinite bitmaps, the stored
// bodies the LeiosDB reads back — where a generic decoder would hide it.

// InfoIndefinite is the additional information of an indefinite length (and
// of the break that ends it).
const InfoIndefinite = 31

var errTruncated = errors.New("cbor: truncated head")

// ReadHead reads the head of one CBOR item: its major type, its additional
// information, and its argument (the value, length or count; 0 when info is
// InfoIndefinite). The argument must be minimally encoded.
func ReadHead(b []byte) (major, info byte, arg uint64, rest []byte, err error) {
	if len(b) == 0 {
		return 0, 0, 0, nil, errTruncated
	}
	major, info, b = b[0]>>5, b[0]&0x1f, b[1:]
	var width int
	switch {
	case info < 24:
		return major, info, uint64(info), b, nil
	case info == 24:
		width = 1
	case info == 25:
		width = 2
	case info == 26:
		width = 4
	case info == 27:
		width = 8
	case info == InfoIndefinite:
		return major, info, 0, b, nil
	default:
		return 0, 0, 0, nil, fmt.Errorf("cbor: reserved additional information %d", info)
	}
	if len(b) < width {
		return 0, 0, 0, nil, errTruncated
	}
	for _, c := range b[:width] {
		arg = arg<<8 | uint64(c)
	}
	if len(AppendHead(nil, major, arg)) != 1+width {
		return 0, 0, 0, nil, fmt.Errorf("cbor: non-minimal encoding of %d", arg)
	}
	return major, info, arg, b[width:], nil
}

// ReadDefiniteHead reads a head of the wanted major type with a definite
// argument.
func ReadDefiniteHead(b []byte, wantMajor byte) (arg uint64, rest []byte, err error) {
	major, info, arg, rest, err := ReadHead(b)
	switch {
	case err != nil:
		return 0, nil, err
	case major != wantMajor:
		return 0, nil, fmt.Errorf("cbor: want major type %d, got %d", wantMajor, major)
	case info == InfoIndefinite:
		return 0, nil, errors.New("cbor: indefinite length")
	}
	return arg, rest, nil
}

// AppendHead appends a minimal-length CBOR head of the given major type.
func AppendHead(buf []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(buf, m|byte(n))
	case n <= 0xff:
		return append(buf, m|24, byte(n))
	case n <= 0xffff:
		return append(buf, m|25, byte(n>>8), byte(n))
	case n <= 0xffffffff:
		return append(buf, m|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		return append(buf, m|27, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32),
			byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}
