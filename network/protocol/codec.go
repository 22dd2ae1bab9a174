package protocol

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/fxamacker/cbor/v2"

	"github.com/leiosnode/leiosnode/block"
)

// maxUvarintLen is the longest frame-length prefix: 9 bytes carry 63 bits,
// far beyond any limit; longer prefixes are malformed.
const maxUvarintLen = 9

// Encode returns m's wire encoding `[tag, payload...]`, where the payload
// is the elements of m's own CBOR array.
func Encode(m Message) ([]byte, error) {
	payload, err := lenientEnc.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", m, err)
	}
	var items []block.RawCBOR
	if err := unmarshalOne(decodeMode(true, false), payload, &items); err != nil {
		return nil, fmt.Errorf("encode %T: payload is not an array: %w", m, err)
	}
	tag, err := block.Marshal(m.Tag())
	if err != nil {
		return nil, err
	}
	return lenientEnc.Marshal(append([]block.RawCBOR{tag}, items...))
}

// Decode decodes one message of sp. Every failure wraps ErrMalformed, and
// ErrIndefiniteLength, ErrTagged or ErrWrongType when the decoder tells why.
func (sp *Spec) Decode(data []byte) (Message, error) {
	m, err := sp.decode(data)
	switch {
	case err == nil:
		return m, nil
	case errors.Is(err, ErrMalformed):
		return nil, err
	}
	return nil, fmt.Errorf("%w: %w", malformedKind(err), err)
}

func (sp *Spec) decode(data []byte) (Message, error) {
	mode := decodeMode(sp.IndefiniteLengths, sp.ForbidTags)
	if len(data) > 0 && data[0] == indefiniteArrayHead {
		// Every codec reads the message array's length first.
		return nil, fmt.Errorf("%w: the message array", ErrIndefiniteLength)
	}
	var items []block.RawCBOR
	if err := unmarshalOne(mode, data, &items); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("empty message array")
	}
	var tag uint64
	if err := unmarshalOne(mode, items[0], &tag); err != nil {
		return nil, fmt.Errorf("tag: %w", err)
	}
	newMsg, ok := sp.Messages[tag]
	if !ok {
		return nil, fmt.Errorf("%s has no message with tag %d", sp.Name, tag)
	}
	payload, err := lenientEnc.Marshal(items[1:])
	if err != nil {
		return nil, err
	}
	m := newMsg()
	if err := unmarshalOne(mode, payload, m); err != nil {
		return nil, fmt.Errorf("%s tag %d: %w", sp.Name, tag, err)
	}
	if v, ok := m.(Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("%s tag %d: %w", sp.Name, tag, err)
		}
	}
	// Last, so a message wrong in other ways is refused for those.
	if sp.MinimalEncoding {
		if err := minimalMessage(data, items, m); err != nil {
			return nil, fmt.Errorf("%s tag %d: %w", sp.Name, tag, err)
		}
	}
	return m, nil
}

// malformedKind is the sentinel of what the CBOR decoder found wrong in
// err, or ErrMalformed if it tells nothing more.
func malformedKind(err error) error {
	var (
		indefinite *cbor.IndefiniteLengthError
		tagged     *cbor.TagsMdError
		wrongType  *cbor.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &indefinite):
		return ErrIndefiniteLength
	case errors.As(err, &tagged):
		return ErrTagged
	case errors.As(err, &wrongType):
		return ErrWrongType
	}
	return ErrMalformed
}

// Embedder is a Message whose payload carries items made elsewhere and kept
// as they were sent — an RB header, whose bytes its issuer signed and its
// hash names: an honest relay forwards them whatever their form, so
// MinimalEncoding leaves payload item i (after the tag, from 0) unchecked
// when Embeds(i), to the codec that owns it.
type Embedder interface {
	Embeds(i int) bool
}

// minimalMessage checks that data, the message of items (its tag first)
// decoding to m, has every head minimal: the message array's, the tag's,
// and those of each payload item m does not embed (Embedder).
func minimalMessage(data []byte, items []block.RawCBOR, m Message) error {
	if _, err := minimalHead(data); err != nil {
		return err
	}
	embedder, _ := m.(Embedder)
	for i, item := range items {
		if i > 0 && embedder != nil && embedder.Embeds(i-1) {
			continue
		}
		rest, err := minimalItem(item, 0)
		if err != nil {
			return err
		}
		if len(rest) != 0 {
			return fmt.Errorf("%w: trailing bytes in an item", ErrMalformed)
		}
	}
	return nil
}

// maxMinimalDepth bounds minimalItem's recursion; the decoder has already
// refused deeper nesting (16 levels), so this only guards the walk.
const maxMinimalDepth = 64

// minimalItem walks one well-formed CBOR item of b: every head minimal,
// the contents of strings skipped. It returns what follows the item.
func minimalItem(b []byte, depth int) ([]byte, error) {
	if depth > maxMinimalDepth {
		return nil, fmt.Errorf("%w: nested too deep", ErrMalformed)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: truncated item", ErrMalformed)
	}
	major, info := b[0]>>5, b[0]&0x1f
	if major == 7 {
		// Simple values and floats: no integer argument to shorten (a
		// float's width is its precision).
		width := headLen(info) - 1
		if len(b) < 1+width {
			return nil, fmt.Errorf("%w: truncated item", ErrMalformed)
		}
		return b[1+width:], nil
	}
	arg, err := minimalHead(b)
	if err != nil {
		return nil, err
	}
	b = b[headLen(info):]
	indefinite := info == block.InfoIndefinite
	switch major {
	case 0, 1: // integers
		return b, nil
	case 2, 3: // strings: their chunks, if indefinite
		if indefinite {
			return minimalUntilBreak(b, depth)
		}
		if uint64(len(b)) < arg {
			return nil, fmt.Errorf("%w: truncated string", ErrMalformed)
		}
		return b[arg:], nil
	case 4, 5: // arrays and maps
		if indefinite {
			return minimalUntilBreak(b, depth)
		}
		n := arg
		if major == 5 {
			n *= 2
		}
		for ; n > 0; n-- {
			if b, err = minimalItem(b, depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	default: // 6: a tag and its item
		return minimalItem(b, depth+1)
	}
}

// minimalUntilBreak walks the items of an indefinite-length item up to and
// past its break.
func minimalUntilBreak(b []byte, depth int) ([]byte, error) {
	for {
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: no break", ErrMalformed)
		}
		if b[0] == 0xff {
			return b[1:], nil
		}
		var err error
		if b, err = minimalItem(b, depth+1); err != nil {
			return nil, err
		}
	}
}

// minimalHead returns the argument of the head b starts with (major types
// 0 to 6), or ErrNonMinimal if it is longer than its value needs.
func minimalHead(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: truncated item", ErrMalformed)
	}
	_, _, arg, _, err := block.ReadHead(b)
	if err != nil {
		if info := b[0] & 0x1f; info >= 24 && info <= 27 && len(b) >= headLen(info) {
			return 0, fmt.Errorf("%w: % x", ErrNonMinimal, b[:headLen(info)])
		}
		return 0, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return arg, nil
}

// headLen is the length of a head of additional information info.
func headLen(info byte) int {
	switch info {
	case 24:
		return 2
	case 25:
		return 3
	case 26:
		return 5
	case 27:
		return 9
	}
	return 1
}

// Definite returns the decoder's error if data, one CBOR item, has an
// indefinite length anywhere (or is not well-formed): what a message of a
// Spec with IndefiniteLengths checks of each item that must be definite,
// in its UnmarshalCBOR or Validate. Decode reports it as
// ErrIndefiniteLength.
func Definite(data []byte) error {
	return decodeMode(false, false).Wellformed(data)
}

// indefiniteArrayHead is the head of an indefinite-length array.
const indefiniteArrayHead = 0x9f

// lenientEnc encodes as block does but allows indefinite lengths: messages
// are split into their items and reassembled with them. decodeModes are
// block's decoding options (duplicate map keys refused, sizes bounded), by
// whether indefinite lengths are allowed and tags forbidden (decodeMode).
// Immutable once built; not state.
var lenientEnc = func() cbor.EncMode {
	opts := cbor.CoreDetEncOptions()
	opts.IndefLength = cbor.IndefLengthAllowed
	em, err := opts.EncMode()
	if err != nil {
		panic(err)
	}
	return em
}()

var decodeModes = func() (modes [2][2]cbor.DecMode) {
	for i, indefinite := range []cbor.IndefLengthMode{cbor.IndefLengthForbidden, cbor.IndefLengthAllowed} {
		for j, tags := range []cbor.TagsMode{cbor.TagsAllowed, cbor.TagsForbidden} {
			dm, err := cbor.DecOptions{
				DupMapKey:        cbor.DupMapKeyEnforcedAPF,
				IndefLength:      indefinite,
				MaxNestedLevels:  16,
				MaxArrayElements: 1 << 20,
				MaxMapPairs:      1 << 20,
				TagsMd:           tags,
			}.DecMode()
			if err != nil {
				panic(err)
			}
			modes[i][j] = dm
		}
	}
	return modes
}()

// decodeMode is the mode that allows indefinite lengths or not, and forbids
// tags or not.
func decodeMode(indefinite, forbidTags bool) cbor.DecMode {
	return decodeModes[boolIndex(indefinite)][boolIndex(forbidTags)]
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// unmarshalOne decodes exactly one item of data into v with mode.
func unmarshalOne(mode cbor.DecMode, data []byte, v any) error {
	rest, err := mode.UnmarshalFirst(data, v)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%d trailing bytes", len(rest))
	}
	return nil
}

// AppendFrame appends the frame of body: its uvarint length, then body.
func AppendFrame(dst, body []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(body))), body...)
}

// errFrameEOF means the stream ended cleanly between two frames.
var errFrameEOF = errors.New("end of stream")

// ReadFrameLen reads a frame's length prefix. Non-minimal or overlong
// prefixes wrap ErrMalformed; the stream ending before the first byte is
// errFrameEOF, inside the prefix io.ErrUnexpectedEOF.
func ReadFrameLen(r *bufio.Reader) (uint64, error) {
	var n uint64
	for i := 0; i < maxUvarintLen; i++ {
		b, err := r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if i == 0 {
					return 0, errFrameEOF
				}
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		n |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			if b == 0 && i > 0 {
				return 0, fmt.Errorf("%w: non-minimal length prefix", ErrMalformed)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%w: length prefix longer than %d bytes", ErrMalformed, maxUvarintLen)
}
