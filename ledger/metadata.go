package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Auxiliary data, restricted to metadata (docs/protocol.md, "Wire formats"):
//
//	auxiliary_data = metadata                           ; Shelley
//	               / [metadata, [* native_script]]      ; Allegra–Mary, no scripts
//	               / #6.259({? 0: metadata})            ; Alonzo on, no scripts
//	metadata       = {* uint => metadatum}
//	metadatum      = {* metadatum => metadatum} / [* metadatum] / int
//	               / bytes .size (0..64) / text .size (0..64)
//
// The walk below reads the auxiliary data's bytes as they came off the wire
// (the tx was checked well-formed, definite-length and at most 32 levels
// deep as a whole before); its hash is over those bytes, never over a
// re-encoding.

const (
	// maxMetadatumBytes is the longest bytes or text a metadatum may be:
	// the CDDL's .size (0..64), which Cardano's ledger enforces.
	maxMetadatumBytes = 64
	// maxMetadatumDepth bounds how deep arrays and maps nest in one
	// metadatum. Cardano sets no bound; 16 is far beyond any metadata
	// standard (CIP-25 nests 4) and keeps the walk's recursion short, below
	// the decoder's bound on the whole tx.
	maxMetadatumDepth = 16
	// auxDataTag is tag 259, the Alonzo form of auxiliary data.
	auxDataTag = 259
)

// Names of the auxiliary data keys of the Alonzo form this ledger refuses.
var unsupportedAuxDataKeys = map[uint64]string{
	1: "native scripts",
	2: "Plutus V1 scripts",
	3: "Plutus V2 scripts",
	4: "Plutus V3 scripts",
}

// checkAuxData checks the shape of auxiliary data, every metadatum in it
// against the metadata rules, and refuses scripts.
//
// Errors wrap ErrMalformed, ErrUnsupported or ErrMetadataInvalid.
func checkAuxData(item []byte) error {
	h, err := readHead(item)
	if err != nil {
		return fmt.Errorf("%w: auxiliary data: %w", ErrMalformed, err)
	}
	var rest []byte
	switch {
	case h.major == majorMap:
		rest, err = checkMetadata(item)
	case h.major == majorArray:
		rest, err = checkShelleyMAAuxData(item, h)
	case h.major == majorTag && h.arg == auxDataTag:
		rest, err = checkAlonzoAuxData(item[h.size:])
	default:
		return fmt.Errorf("%w: auxiliary data is neither metadata nor a tag 259 map", ErrMalformed)
	}
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: auxiliary data: %d bytes after it", ErrMalformed, len(rest))
	}
	return nil
}

// checkShelleyMAAuxData checks `[metadata, [* native_script]]`, which
// carries no scripts here.
func checkShelleyMAAuxData(item []byte, h cborHead) ([]byte, error) {
	if h.arg != 2 {
		return nil, fmt.Errorf("%w: auxiliary data array of %d elements, want 2", ErrMalformed, h.arg)
	}
	rest, err := checkMetadata(item[h.size:])
	if err != nil {
		return nil, err
	}
	scripts, err := readHead(rest)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: auxiliary data scripts: %w", ErrMalformed, err)
	case scripts.major != majorArray:
		return nil, fmt.Errorf("%w: auxiliary data scripts are not an array", ErrMalformed)
	case scripts.arg != 0:
		return nil, fmt.Errorf("%w: native scripts in auxiliary data", ErrUnsupported)
	}
	return rest[scripts.size:], nil
}

// checkAlonzoAuxData checks the map under tag 259: metadata only.
func checkAlonzoAuxData(item []byte) ([]byte, error) {
	h, err := readHead(item)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: auxiliary data: %w", ErrMalformed, err)
	case h.major != majorMap:
		return nil, fmt.Errorf("%w: auxiliary data under tag 259 is not a map", ErrMalformed)
	}
	rest := item[h.size:]
	seen := map[uint64]bool{}
	for range h.arg {
		k, err := readHead(rest)
		if err != nil || k.major != majorUint {
			return nil, fmt.Errorf("%w: auxiliary data key is not an unsigned integer", ErrMalformed)
		}
		switch name, refused := unsupportedAuxDataKeys[k.arg]; {
		case refused:
			return nil, fmt.Errorf("%w: %s in auxiliary data (key %d)", ErrUnsupported, name, k.arg)
		case k.arg != 0:
			return nil, fmt.Errorf("%w: unknown auxiliary data key %d", ErrMalformed, k.arg)
		case seen[k.arg]:
			return nil, fmt.Errorf("%w: auxiliary data key %d twice", ErrMalformed, k.arg)
		}
		seen[k.arg] = true
		if rest, err = checkMetadata(rest[k.size:]); err != nil {
			return nil, err
		}
	}
	return rest, nil
}

// checkMetadata checks `{* uint => metadatum}` at the start of b and
// returns what follows it. A label may appear once, as Conway's decoder
// requires of a map; within a metadatum a key may repeat (Cardano decodes
// a metadatum map as a list of pairs).
func checkMetadata(b []byte) ([]byte, error) {
	h, err := readHead(b)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: metadata: %w", ErrMalformed, err)
	case h.major != majorMap:
		return nil, fmt.Errorf("%w: metadata is not a map", ErrMalformed)
	case h.arg > uint64(len(b)):
		return nil, fmt.Errorf("%w: metadata: truncated", ErrMalformed)
	}
	rest := b[h.size:]
	labels := make(map[uint64]bool, h.arg)
	for range h.arg {
		label, err := readHead(rest)
		if err != nil || label.major != majorUint {
			return nil, fmt.Errorf("%w: metadata label is not an unsigned integer", ErrMalformed)
		}
		if labels[label.arg] {
			return nil, fmt.Errorf("%w: metadata label %d twice", ErrMalformed, label.arg)
		}
		labels[label.arg] = true
		if rest, err = checkMetadatum(rest[label.size:], 0); err != nil {
			return nil, fmt.Errorf("metadata label %d: %w", label.arg, err)
		}
	}
	return rest, nil
}

// checkMetadatum checks the metadatum at the start of b, inside depth
// arrays and maps of its label's metadatum, and returns what follows it.
func checkMetadatum(b []byte, depth int) ([]byte, error) {
	h, err := readHead(b)
	if err != nil {
		return nil, fmt.Errorf("%w: metadatum: %w", ErrMalformed, err)
	}
	rest := b[h.size:]
	switch h.major {
	case majorUint, majorNegative:
		return rest, nil
	case majorBytes, majorText:
		if h.arg > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: metadatum: truncated", ErrMalformed)
		}
		what := "bytes"
		if h.major == majorText {
			what = "text"
			if !utf8.Valid(rest[:h.arg]) {
				return nil, fmt.Errorf("%w: metadatum text is not UTF-8", ErrMalformed)
			}
		}
		if h.arg > maxMetadatumBytes {
			return nil, fmt.Errorf("%w: %s of %d bytes, at most %d", ErrMetadataInvalid, what, h.arg, maxMetadatumBytes)
		}
		return rest[h.arg:], nil
	case majorArray, majorMap:
		if depth == maxMetadatumDepth {
			return nil, fmt.Errorf("%w: arrays and maps nested deeper than %d", ErrMetadataInvalid, maxMetadatumDepth)
		}
		items := h.arg
		if h.major == majorMap {
			items *= 2
		}
		// Every item takes a byte at least: a count beyond what is left
		// is truncated, and the loop below stays as short as b.
		if h.arg > uint64(len(rest)) || items > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: metadatum: truncated", ErrMalformed)
		}
		for range items {
			if rest, err = checkMetadatum(rest, depth+1); err != nil {
				return nil, err
			}
		}
		return rest, nil
	case majorTag:
		return nil, fmt.Errorf("%w: metadatum carries tag %d (metadata has none)", ErrMalformed, h.arg)
	default:
		return nil, fmt.Errorf("%w: metadatum is a float or a simple value", ErrMalformed)
	}
}

// CBOR major types the metadata walk reads besides codec.go's.
const (
	majorNegative = 1
	majorText     = 3
	majorTag      = 6
)

// cborHead is the head of a CBOR item: its major type, its argument (a
// value, a length, a count or a tag number) and the head's size in bytes.
type cborHead struct {
	major byte
	arg   uint64
	size  int
}

// readHead reads the head of the item at the start of b. An indefinite
// length is refused, as everywhere in a tx.
func readHead(b []byte) (cborHead, error) {
	if len(b) == 0 {
		return cborHead{}, errTruncated
	}
	h := cborHead{major: b[0] >> 5, size: 1}
	info := b[0] & 0x1f
	switch {
	case info < 24:
		h.arg = uint64(info)
		return h, nil
	case info <= 27:
		n := 1 << (info - 24)
		if len(b) < 1+n {
			return cborHead{}, errTruncated
		}
		var buf [8]byte
		copy(buf[8-n:], b[1:1+n])
		h.arg, h.size = binary.BigEndian.Uint64(buf[:]), 1+n
		return h, nil
	case info == 31:
		return cborHead{}, errIndefinite
	default:
		return cborHead{}, fmt.Errorf("reserved additional information %d", info)
	}
}

// Errors of readHead, wrapped in ErrMalformed by its callers.
var (
	errTruncated  = errors.New("truncated")
	errIndefinite = errors.New("indefinite length")
)

// AuxDataHash is the hash body key 7 must carry for auxiliary data: the
// Blake2b-256 of its bytes as they appear in the tx.
func AuxDataHash(auxData []byte) [32]byte { return hash256(auxData) }

// EncodeMetadata encodes metadata as auxiliary data in the Shelley form,
// canonically: labels to metadatums, each an int, []byte, string, a slice
// or a map of metadatums. It refuses what the rules would (bytes or text
// over 64 bytes, nesting deeper than 16, other Go types), so that a tx
// built with it (TxBody.AuxData) is not refused for its metadata.
func EncodeMetadata(metadata map[uint64]any) ([]byte, error) {
	b, err := encMode.Marshal(metadata)
	if err != nil {
		return nil, fmt.Errorf("ledger: encoding metadata: %w", err)
	}
	if err := checkAuxData(b); err != nil {
		return nil, fmt.Errorf("ledger: encoding metadata: %w", err)
	}
	return b, nil
}
