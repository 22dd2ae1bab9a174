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
	if err := unmarshalLenient(payload, &items); err != nil {
		return nil, fmt.Errorf("encode %T: payload is not an array: %w", m, err)
	}
	tag, err := block.Marshal(m.Tag())
	if err != nil {
		return nil, err
	}
	return lenientEnc.Marshal(append([]block.RawCBOR{tag}, items...))
}

// Decode decodes one message of sp. Every failure wraps ErrMalformed.
func (sp *Spec) Decode(data []byte) (Message, error) {
	unmarshal := block.Unmarshal
	if sp.IndefiniteLengths {
		unmarshal = unmarshalLenient
	}
	var items []block.RawCBOR
	if err := unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: empty message array", ErrMalformed)
	}
	var tag uint64
	if err := block.Unmarshal(items[0], &tag); err != nil {
		return nil, fmt.Errorf("%w: tag: %w", ErrMalformed, err)
	}
	newMsg, ok := sp.Messages[tag]
	if !ok {
		return nil, fmt.Errorf("%w: %s has no message with tag %d", ErrMalformed, sp.Name, tag)
	}
	payload, err := lenientEnc.Marshal(items[1:])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	m := newMsg()
	if err := unmarshal(payload, m); err != nil {
		return nil, fmt.Errorf("%w: %s tag %d: %w", ErrMalformed, sp.Name, tag, err)
	}
	if v, ok := m.(Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %s tag %d: %w", ErrMalformed, sp.Name, tag, err)
		}
	}
	return m, nil
}

// lenientEnc and lenientMode are block's encoding and decoding modes but
// for indefinite lengths, which they allow: messages are split into their
// items and reassembled with them, and only a Spec with IndefiniteLengths
// decodes with lenientMode. Immutable once built; not state.
var lenientEnc = func() cbor.EncMode {
	opts := cbor.CoreDetEncOptions()
	opts.IndefLength = cbor.IndefLengthAllowed
	em, err := opts.EncMode()
	if err != nil {
		panic(err)
	}
	return em
}()

var lenientMode = func() cbor.DecMode {
	dm, err := cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthAllowed,
		MaxNestedLevels:  16,
		MaxArrayElements: 1 << 20,
		MaxMapPairs:      1 << 20,
		TagsMd:           cbor.TagsAllowed,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

// unmarshalLenient decodes exactly one item, allowing indefinite lengths.
func unmarshalLenient(data []byte, v any) error {
	rest, err := lenientMode.UnmarshalFirst(data, v)
	if err != nil {
		return fmt.Errorf("%w: %w", block.ErrMalformed, err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", block.ErrMalformed, len(rest))
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
