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
