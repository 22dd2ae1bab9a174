package fetch

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/leiosnode/leiosnode/block"
)

// Window is 64 consecutive txs of an EB body: bit i of Mask, counted from
// the most significant bit, selects the tx at offset 64·Index + i.
type Window struct {
	Index uint16
	Mask  uint64
}

// Bitmaps selects txs of an EB body by offset. On the wire it is a map
// { uint16 window => uint64 mask }, windows strictly ascending, no zero
// mask; the selected txs travel in ascending offset order.
type Bitmaps []Window

// MaxOffset bounds the offsets a Bitmaps can name (65,536 windows of 64).
const MaxOffset = 64<<16 - 1

// ErrBitmaps is wrapped by every reason a Bitmaps is malformed.
var ErrBitmaps = errors.New("fetch: malformed bitmaps")

// BitmapsOf packs strictly ascending offsets.
func BitmapsOf(offsets []int) (Bitmaps, error) {
	var bm Bitmaps
	prev := -1
	for _, off := range offsets {
		if off <= prev || off > MaxOffset {
			return nil, fmt.Errorf("%w: offset %d after %d", ErrBitmaps, off, prev)
		}
		prev = off
		w := uint16(off / 64)
		if len(bm) == 0 || bm[len(bm)-1].Index != w {
			bm = append(bm, Window{Index: w})
		}
		bm[len(bm)-1].Mask |= 1 << (63 - off%64)
	}
	return bm, nil
}

// Offsets lists the selected offsets, ascending.
func (bm Bitmaps) Offsets() []int {
	out := make([]int, 0, bm.Count())
	for _, w := range bm {
		for m := w.Mask; m != 0; {
			bit := bits.LeadingZeros64(m) // from the MSB: ascending offsets
			out = append(out, 64*int(w.Index)+bit)
			m &^= 1 << (63 - bit)
		}
	}
	return out
}

// Count is the number of selected txs.
func (bm Bitmaps) Count() int {
	n := 0
	for _, w := range bm {
		n += bits.OnesCount64(w.Mask)
	}
	return n
}

// Equal reports whether two bitmaps select the same txs.
func (bm Bitmaps) Equal(other Bitmaps) bool { return slices.Equal(bm, other) }

// Validate checks the wire rules: windows strictly ascending, no zero mask.
func (bm Bitmaps) Validate() error {
	for i, w := range bm {
		if w.Mask == 0 {
			return fmt.Errorf("%w: window %d has an empty mask", ErrBitmaps, w.Index)
		}
		if i > 0 && w.Index <= bm[i-1].Index {
			return fmt.Errorf("%w: window %d after window %d", ErrBitmaps, w.Index, bm[i-1].Index)
		}
	}
	return nil
}

// MarshalCBOR writes the indefinite-length map that the Haskell
// prototype's codec does (and only reads).
func (bm Bitmaps) MarshalCBOR() ([]byte, error) {
	if err := bm.Validate(); err != nil {
		return nil, err
	}
	return appendBitmaps(nil, bm), nil
}

// appendBitmaps encodes bm as an indefinite-length map with minimal-length
// integers.
func appendBitmaps(dst []byte, bm Bitmaps) []byte {
	dst = append(dst, block.InfoIndefinite|majorMap<<5)
	for _, w := range bm {
		dst = block.AppendHead(dst, majorUint, uint64(w.Index))
		dst = block.AppendHead(dst, majorUint, w.Mask)
	}
	return append(dst, breakByte)
}

// UnmarshalCBOR reads the indefinite-length map, the one form the Haskell
// codec reads (decodeMapLenIndef): a definite-length map is refused. Keys
// and values must be minimal-length unsigned integers, keys fit 16 bits,
// and the wire rules of Validate hold; anything else wraps ErrBitmaps.
func (bm *Bitmaps) UnmarshalCBOR(data []byte) error {
	r := cborReader{buf: data}
	if err := r.indefiniteMapHead(); err != nil {
		return fmt.Errorf("%w: %w", ErrBitmaps, err)
	}
	var out Bitmaps
	for !r.atBreak() {
		idx, err := r.uint()
		if err != nil {
			return fmt.Errorf("%w: window: %w", ErrBitmaps, err)
		}
		if idx > 0xffff {
			return fmt.Errorf("%w: window %d exceeds 16 bits", ErrBitmaps, idx)
		}
		mask, err := r.uint()
		if err != nil {
			return fmt.Errorf("%w: mask of window %d: %w", ErrBitmaps, idx, err)
		}
		out = append(out, Window{Index: uint16(idx), Mask: mask})
	}
	if len(r.buf) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrBitmaps, len(r.buf))
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*bm = out
	return nil
}

// CBOR major types used by the hand-written codecs, and the break byte
// that ends an indefinite-length item.
const (
	majorUint  = 0
	majorBytes = 2
	majorMap   = 5
	breakByte  = 0xff
	// cipEBBodyHead is the head of the CIP's EB body, a one-element array.
	cipEBBodyHead = 0x81
)

// cborReader reads the few CBOR heads the bitmaps codec needs, strictly:
// minimal lengths only.
type cborReader struct{ buf []byte }

// head reads one head (block.ReadHead: minimal lengths only).
func (r *cborReader) head() (major byte, info byte, arg uint64, err error) {
	major, info, arg, r.buf, err = block.ReadHead(r.buf)
	return major, info, arg, err
}

// indefiniteMapHead reads the head of an indefinite-length map.
func (r *cborReader) indefiniteMapHead() error {
	major, info, _, err := r.head()
	switch {
	case err != nil:
		return err
	case major != majorMap:
		return fmt.Errorf("want a map, got major type %d", major)
	case info != block.InfoIndefinite:
		return errors.New("a definite-length map: the codec reads the indefinite-length form only")
	}
	return nil
}

// uint reads an unsigned integer.
func (r *cborReader) uint() (uint64, error) {
	major, info, arg, err := r.head()
	switch {
	case err != nil:
		return 0, err
	case major != majorUint || info == block.InfoIndefinite:
		return 0, fmt.Errorf("want an unsigned integer, got major type %d", major)
	}
	return arg, nil
}

// atBreak consumes the break byte ending the map, if it is next. Without
// one, the next read fails on the end of the input.
func (r *cborReader) atBreak() bool {
	if len(r.buf) > 0 && r.buf[0] == breakByte {
		r.buf = r.buf[1:]
		return true
	}
	return false
}
