package protocol

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/leiosnode/leiosnode/block"
)

// maxUvarintLen is the longest frame-length prefix: 9 bytes carry 63 bits,
// far beyond any limit; longer prefixes are malformed.
const maxUvarintLen = 9

// Encode returns m's wire encoding `[tag, payload...]`, where the payload
// is the elements of m's own CBOR array.
func Encode(m Message) ([]byte, error) {
	payload, err := block.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", m, err)
	}
	var items []block.RawCBOR
	if err := block.Unmarshal(payload, &items); err != nil {
		return nil, fmt.Errorf("encode %T: payload is not an array: %w", m, err)
	}
	tag, err := block.Marshal(m.Tag())
	if err != nil {
		return nil, err
	}
	return block.Marshal(append([]block.RawCBOR{tag}, items...))
}

// Decode decodes one message of sp. Every failure wraps ErrMalformed.
func (sp *Spec) Decode(data []byte) (Message, error) {
	var items []block.RawCBOR
	if err := block.Unmarshal(data, &items); err != nil {
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
	payload, err := block.Marshal(items[1:])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	m := newMsg()
	if err := block.Unmarshal(payload, m); err != nil {
		return nil, fmt.Errorf("%w: %s tag %d: %w", ErrMalformed, sp.Name, tag, err)
	}
	if v, ok := m.(Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %s tag %d: %w", ErrMalformed, sp.Name, tag, err)
		}
	}
	return m, nil
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
