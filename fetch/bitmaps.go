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
// prototype's codec does.
func (bm Bitmaps) MarshalCBOR() ([]byte, error) {
	if err := bm.Validate(); err != nil {
		return nil, err
	}
	return appendBitmaps(nil, bm, true), nil
}

// appendBitmaps encodes bm as a definite- or indefinite-length map with
// minimal-length integers.
func appendBitmaps(dst []byte, bm Bitmaps, indefinite bool) []byte {
	if indefinite {
		dst = append(dst, 0xbf)
	} else {
		dst = block.AppendHead(dst, majorMap, uint64(len(bm)))
	}
	for _, w := range bm {
		dst = block.AppendHead(dst, majorUint, uint64(w.Index))
		dst = block.AppendHead(dst, majorUint, w.Mask)
	}
	if indefinite {
		dst = append(dst, 0xff)
	}
	return dst
}

// UnmarshalCBOR reads either form of the map. Keys and values must be
// minimal-length unsigned integers, keys fit 16 bits, and the wire rules of
// Validate hold; anything else wraps ErrBitmaps.
func (bm *Bitmaps) UnmarshalCBOR(data []byte) error {
	r := cborReader{buf: data}
	n, indefinite, err := r.mapHead()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBitmaps, err)
	}
	var out Bitmaps
	for i := uint64(0); indefinite || i < n; i++ {
		if indefinite && r.peekBreak() {
			break
		}
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

// CBOR major types used by the hand-written codecs.
const (
	majorUint = 0
	majorMap  = 5
)

// cborReader reads the few CBOR heads the bitmaps codec needs, strictly:
// minimal lengths only.
type cborReader struct{ buf []byte }

// head reads one head (block.ReadHead: minimal lengths only).
func (r *cborReader) head() (major byte, info byte, arg uint64, err error) {
	major, info, arg, r.buf, err = block.ReadHead(r.buf)
	return major, info, arg, err
}

// mapHead reads a map head, definite (n entries) or indefinite.
func (r *cborReader) mapHead() (n uint64, indefinite bool, err error) {
	major, info, arg, err := r.head()
	switch {
	case err != nil:
		return 0, false, err
	case major != majorMap:
		return 0, false, fmt.Errorf("want a map, got major type %d", major)
	case info == block.InfoIndefinite:
		return 0, true, nil
	}
	return arg, false, nil
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

// peekBreak consumes the break byte ending an indefinite-length item.
func (r *cborReader) peekBreak() bool {
	if len(r.buf) > 0 && r.buf[0] == 0xff {
		r.buf = r.buf[1:]
		return true
	}
	return false
}
