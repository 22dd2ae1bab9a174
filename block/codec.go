package block

import (
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// ErrMalformed is wrapped by every decoding error of this package.
var ErrMalformed = errors.New("block: malformed CBOR")

// Modes are immutable once built, so sharing them is safe; they are not state.
var (
	encMode = mustEncMode()
	decMode = mustDecMode()
)

func mustEncMode() cbor.EncMode {
	opts := cbor.CoreDetEncOptions()
	em, err := opts.EncMode()
	if err != nil {
		panic(err)
	}
	return em
}

func mustDecMode() cbor.DecMode {
	dm, err := cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthForbidden,
		MaxNestedLevels:  16,
		MaxArrayElements: 1 << 20,
		MaxMapPairs:      1 << 20,
		// Transactions inside block bodies may carry tag 258 on sets; they are
		// kept as raw bytes here and checked by the ledger.
		TagsMd: cbor.TagsAllowed,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}

// Marshal encodes v with the package's deterministic encoding (minimal-length
// integers, definite lengths). It is exported for protocol packages whose
// messages embed block types.
func Marshal(v any) ([]byte, error) { return encMode.Marshal(v) }

// Unmarshal decodes exactly one CBOR item from data into v, rejecting
// trailing bytes and indefinite lengths.
func Unmarshal(data []byte, v any) error {
	rest, err := decMode.UnmarshalFirst(data, v)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(rest))
	}
	return nil
}

func mustMarshal(v any) []byte {
	b, err := encMode.Marshal(v)
	if err != nil {
		// Only types of this package are passed here; they always encode.
		panic(fmt.Sprintf("block: encoding %T: %v", v, err))
	}
	return b
}
