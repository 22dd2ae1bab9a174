package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/fxamacker/cbor/v2"
	"golang.org/x/crypto/blake2b"
)

// CBOR modes are immutable once built, so sharing them is safe; they are not
// state.
//
// Tag 258 (a set) is the only tag a supported tx carries, and only on the
// inputs and on the vkey witnesses. Containers (the tx, the body, the
// witness set, the outputs) are therefore split into raw items with setMode,
// which lets tags through, so that an unsupported feature is named even
// when it carries tags (inline datums and reference scripts use tag 24).
// The split never accepts a tag itself: map keys are wireUint, which refuses
// tags, and every item is checked by its major type or decoded with
// strictMode, which forbids tags, after stripping a 258 where one is allowed.
var (
	setMode    = mustDecMode(cbor.TagsAllowed)
	strictMode = mustDecMode(cbor.TagsForbidden)
	encMode    = mustEncMode()
)

func mustDecMode(tags cbor.TagsMode) cbor.DecMode {
	dm, err := cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthForbidden,
		MaxNestedLevels:  32,
		MaxArrayElements: 1 << 16,
		MaxMapPairs:      1 << 16,
		TagsMd:           tags,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}

func mustEncMode() cbor.EncMode {
	em, err := cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		panic(err)
	}
	return em
}

// CBOR major types, as the high 3 bits of an item's first byte.
const (
	majorUint  = 0
	majorBytes = 2
	majorArray = 4
	majorMap   = 5
)

func majorType(item []byte) byte {
	if len(item) == 0 {
		return 0xff
	}
	return item[0] >> 5
}

// Simple values of the transaction array.
const (
	cborFalse = 0xf4
	cborTrue  = 0xf5
	cborNull  = 0xf6
)

// setTag is the encoding of tag 258, which may prefix a set.
var setTag = []byte{0xd9, 0x01, 0x02}

// untagSet strips an optional tag 258 from a set.
func untagSet(item []byte) []byte {
	if len(item) >= len(setTag) && item[0] == setTag[0] && item[1] == setTag[1] && item[2] == setTag[2] {
		return item[len(setTag):]
	}
	return item
}

// Names of the Conway body keys this ledger refuses, for the error message.
var unsupportedBodyKeys = map[uint64]string{
	4:  "certificates",
	5:  "withdrawals",
	6:  "protocol parameter update",
	9:  "mint (multi-assets)",
	11: "script data hash (Plutus)",
	13: "collateral inputs (Plutus)",
	14: "required signers",
	15: "network id in body",
	16: "collateral return (Plutus)",
	17: "total collateral (Plutus)",
	18: "reference inputs",
	19: "voting procedures (governance)",
	20: "proposal procedures (governance)",
	21: "current treasury value (governance)",
	22: "treasury donation (governance)",
}

// Names of the Conway witness set keys this ledger refuses.
var unsupportedWitnessKeys = map[uint64]string{
	1: "native scripts",
	2: "bootstrap (Byron) witnesses",
	3: "Plutus V1 scripts",
	4: "Plutus data",
	5: "redeemers",
	6: "Plutus V2 scripts",
	7: "Plutus V3 scripts",
}

// DecodeTx decodes `[body, witness_set, true, auxiliary_data / null]`,
// keeping the bytes: the tx id is the hash of the body exactly as it
// appears in raw, the auxiliary data hash the hash of the auxiliary data
// so. It checks the shape of the tx, the kind of every output address and
// the auxiliary data rules (they need nothing else); it checks no rule
// that needs the UTxO, the slot or the parameters (see Apply).
//
// Errors wrap ErrMalformed, ErrUnsupported (naming the feature), or one
// of the auxiliary data rules (ErrAuxDataHashMissing, ErrAuxDataMissing,
// ErrAuxDataHashMismatch, ErrMetadataInvalid).
func DecodeTx(raw []byte) (*Tx, error) {
	tx, err := decodeTx(raw)
	if err != nil {
		return nil, err
	}
	tx.hash = blake2b.Sum256(tx.raw)
	return tx, nil
}

// DecodeHashedTx is DecodeTx for bytes whose hash was computed where they
// entered the node (a fetched tx checked against the body naming it): the
// tx's Hash is that one, not computed again. hash must be the Blake2b-256
// of raw.
func DecodeHashedTx(raw []byte, hash [32]byte) (*Tx, error) {
	tx, err := decodeTx(raw)
	if err != nil {
		return nil, err
	}
	tx.hash = hash
	return tx, nil
}

// decodeTx is DecodeTx but for the tx's hash.
func decodeTx(raw []byte) (*Tx, error) {
	if majorType(raw) != majorArray {
		return nil, fmt.Errorf("%w: tx is not an array", ErrMalformed)
	}
	// Decode from a private copy, so that the raw items may alias it.
	tx := &Tx{raw: bytes.Clone(raw)}
	var parts []rawItem
	if err := setMode.Unmarshal(tx.raw, &parts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(parts) != 4 {
		return nil, fmt.Errorf("%w: tx array of %d elements, want 4", ErrMalformed, len(parts))
	}
	tx.body = parts[0]

	auxDataHash, err := decodeBody(parts[0], tx)
	if err != nil {
		return nil, err
	}
	if err := decodeWitnesses(parts[1], tx); err != nil {
		return nil, err
	}
	switch {
	case len(parts[2]) == 1 && parts[2][0] == cborTrue:
	case len(parts[2]) == 1 && parts[2][0] == cborFalse:
		return nil, fmt.Errorf("%w: is_valid = false (phase-2 script failure)", ErrUnsupported)
	default:
		return nil, fmt.Errorf("%w: is_valid is not a bool", ErrMalformed)
	}
	if err := decodeAuxData(parts[3], auxDataHash, tx); err != nil {
		return nil, err
	}
	tx.id = blake2b.Sum256(tx.body)
	return tx, nil
}

// decodeAuxData checks the tx's auxiliary data (null or metadata) against
// the body's key 7, auxDataHash (nil: absent), and keeps its bytes.
func decodeAuxData(item []byte, auxDataHash *[32]byte, tx *Tx) error {
	if len(item) == 1 && item[0] == cborNull {
		if auxDataHash != nil {
			return fmt.Errorf("%w: key 7 is %x, the auxiliary data null", ErrAuxDataMissing, auxDataHash[:])
		}
		return nil
	}
	if err := checkAuxData(item); err != nil {
		return err
	}
	got := hash256(item)
	switch {
	case auxDataHash == nil:
		return fmt.Errorf("%w: auxiliary data of %d bytes hashes to %x", ErrAuxDataHashMissing, len(item), got[:])
	case *auxDataHash != got:
		return fmt.Errorf("%w: key 7 is %x, the auxiliary data's %d bytes hash to %x", ErrAuxDataHashMismatch, auxDataHash[:], len(item), got[:])
	}
	tx.auxData = item
	return nil
}

// decodeBody decodes the body into tx and returns its key 7, the
// auxiliary data hash (nil: absent).
func decodeBody(item []byte, tx *Tx) (*[32]byte, error) {
	fields, err := decodeKeyedMap(item, "body")
	if err != nil {
		return nil, err
	}
	if k, found := leastRefusedKey(fields, func(k wireUint) bool { return k <= 3 || k == 7 || k == 8 }); found {
		if name, ok := unsupportedBodyKeys[uint64(k)]; ok {
			return nil, fmt.Errorf("%w: %s (body key %d)", ErrUnsupported, name, k)
		}
		return nil, fmt.Errorf("%w: unknown body key %d", ErrMalformed, k)
	}
	for _, k := range []wireUint{0, 1, 2} {
		if _, ok := fields[k]; !ok {
			return nil, fmt.Errorf("%w: body lacks key %d (%s)", ErrMalformed, k, [...]string{"inputs", "outputs", "fee"}[k])
		}
	}

	var inputs []inputWire
	if err := strictMode.Unmarshal(untagSet(fields[0]), &inputs); err != nil {
		return nil, fmt.Errorf("%w: inputs: %w", ErrMalformed, err)
	}
	tx.Inputs = make([]TxIn, len(inputs))
	for i, in := range inputs {
		if in.Index > math.MaxUint16 {
			return nil, fmt.Errorf("%w: input %d: index %d exceeds 16 bits", ErrMalformed, i, in.Index)
		}
		tx.Inputs[i] = TxIn{TxID: in.TxID, Index: uint32(in.Index)}
	}

	if err := decodeOutputs(fields[1], tx); err != nil {
		return nil, err
	}
	if tx.Fee, err = decodeUint(fields[2], "fee"); err != nil {
		return nil, err
	}
	if v, ok := fields[3]; ok {
		ttl, err := decodeUint(v, "ttl")
		if err != nil {
			return nil, err
		}
		tx.TTL = &ttl
	}
	if v, ok := fields[8]; ok {
		start, err := decodeUint(v, "validity start")
		if err != nil {
			return nil, err
		}
		tx.ValidityStart = &start
	}
	v, ok := fields[7]
	if !ok {
		return nil, nil
	}
	var auxDataHash bytes32
	if majorType(v) != majorBytes {
		return nil, fmt.Errorf("%w: auxiliary data hash is not a byte string", ErrMalformed)
	}
	if err := strictMode.Unmarshal(v, &auxDataHash); err != nil {
		return nil, fmt.Errorf("%w: auxiliary data hash: %w", ErrMalformed, err)
	}
	return (*[32]byte)(&auxDataHash), nil
}

func decodeOutputs(item []byte, tx *Tx) error {
	var outs []rawItem
	if majorType(item) != majorArray {
		return fmt.Errorf("%w: outputs are not an array", ErrMalformed)
	}
	if err := setMode.Unmarshal(item, &outs); err != nil {
		return fmt.Errorf("%w: outputs: %w", ErrMalformed, err)
	}
	tx.Outputs = make([]TxOut, len(outs))
	tx.outputSizes = make([]int, len(outs))
	for i, o := range outs {
		out, err := decodeOutput(o)
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
		tx.Outputs[i] = out
		tx.outputSizes[i] = len(o)
	}
	return nil
}

// decodeOutput decodes `[address, coin]` (legacy form) or `{0: address,
// 1: coin}` (post-Alonzo form), refusing datums, scripts and multi-assets.
func decodeOutput(item []byte) (TxOut, error) {
	var addr, value []byte
	switch majorType(item) {
	case majorArray:
		var fields []rawItem
		if err := setMode.Unmarshal(item, &fields); err != nil {
			return TxOut{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		switch len(fields) {
		case 2:
		case 3:
			return TxOut{}, fmt.Errorf("%w: datum hash on output", ErrUnsupported)
		default:
			return TxOut{}, fmt.Errorf("%w: output array of %d elements", ErrMalformed, len(fields))
		}
		addr, value = fields[0], fields[1]
	case majorMap:
		var fields map[wireUint]rawItem
		if err := setMode.Unmarshal(item, &fields); err != nil {
			return TxOut{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if k, found := leastRefusedKey(fields, func(k wireUint) bool { return k <= 1 }); found {
			switch k {
			case 2:
				return TxOut{}, fmt.Errorf("%w: datum on output (output key 2)", ErrUnsupported)
			case 3:
				return TxOut{}, fmt.Errorf("%w: reference script on output (output key 3)", ErrUnsupported)
			default:
				return TxOut{}, fmt.Errorf("%w: unknown output key %d", ErrMalformed, k)
			}
		}
		var ok bool
		if addr, ok = fields[0]; !ok {
			return TxOut{}, fmt.Errorf("%w: output lacks key 0 (address)", ErrMalformed)
		}
		if value, ok = fields[1]; !ok {
			return TxOut{}, fmt.Errorf("%w: output lacks key 1 (value)", ErrMalformed)
		}
	default:
		return TxOut{}, fmt.Errorf("%w: output is neither an array nor a map", ErrMalformed)
	}

	var out TxOut
	if majorType(addr) != majorBytes {
		return TxOut{}, fmt.Errorf("%w: address is not a byte string", ErrMalformed)
	}
	if err := strictMode.Unmarshal(addr, &out.Address); err != nil {
		return TxOut{}, fmt.Errorf("%w: address: %w", ErrMalformed, err)
	}
	if err := CheckAddress(out.Address); err != nil {
		return TxOut{}, err
	}
	switch majorType(value) {
	case majorUint:
	case majorArray:
		return TxOut{}, fmt.Errorf("%w: multi-asset value", ErrUnsupported)
	default:
		return TxOut{}, fmt.Errorf("%w: value is not a coin", ErrMalformed)
	}
	coin, err := decodeUint(value, "coin")
	if err != nil {
		return TxOut{}, err
	}
	out.Coin = coin
	return out, nil
}

func decodeWitnesses(item []byte, tx *Tx) error {
	fields, err := decodeKeyedMap(item, "witness set")
	if err != nil {
		return err
	}
	if k, found := leastRefusedKey(fields, func(k wireUint) bool { return k == 0 }); found {
		if name, ok := unsupportedWitnessKeys[uint64(k)]; ok {
			return fmt.Errorf("%w: %s (witness set key %d)", ErrUnsupported, name, k)
		}
		return fmt.Errorf("%w: unknown witness set key %d", ErrMalformed, k)
	}
	v, ok := fields[0]
	if !ok {
		return nil
	}
	var ws []witnessWire
	if err := strictMode.Unmarshal(untagSet(v), &ws); err != nil {
		return fmt.Errorf("%w: vkey witnesses: %w", ErrMalformed, err)
	}
	tx.Witnesses = make([]VKeyWitness, len(ws))
	for i, w := range ws {
		tx.Witnesses[i] = VKeyWitness{VKey: w.VKey, Signature: w.Signature}
	}
	return nil
}

// decodeKeyedMap splits a map with uint keys into its raw values. The values
// may carry tags (a set's 258); the caller decodes each with strictMode.
func decodeKeyedMap(item []byte, what string) (map[wireUint]rawItem, error) {
	if majorType(item) != majorMap {
		return nil, fmt.Errorf("%w: %s is not a map", ErrMalformed, what)
	}
	var fields map[wireUint]rawItem
	if err := setMode.Unmarshal(item, &fields); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, what, err)
	}
	return fields, nil
}

// leastRefusedKey returns the least key of fields that allowed refuses, so
// that the error for a tx with several refused keys does not depend on map
// iteration order.
func leastRefusedKey(fields map[wireUint]rawItem, allowed func(wireUint) bool) (wireUint, bool) {
	var least wireUint
	found := false
	for k := range fields {
		if !allowed(k) && (!found || k < least) {
			least, found = k, true
		}
	}
	return least, found
}

// rawItem is one CBOR item as it appears in the decoded buffer. Unlike
// cbor.RawMessage it does not copy: it aliases the buffer, which is only
// safe because DecodeTx decodes from the Tx's private, never-modified copy.
type rawItem []byte

func (r *rawItem) UnmarshalCBOR(item []byte) error {
	*r = item[:len(item):len(item)]
	return nil
}

// decodeUint decodes a bare unsigned integer.
func decodeUint(item []byte, what string) (uint64, error) {
	var u wireUint
	if err := u.UnmarshalCBOR(item); err != nil {
		return 0, fmt.Errorf("%w: %s: %w", ErrMalformed, what, err)
	}
	return uint64(u), nil
}

// wireUint is an unsigned integer that refuses a tag in front of it, even
// when decoded with setMode.
type wireUint uint64

var errNotUint = errors.New("not an unsigned integer")

func (u *wireUint) UnmarshalCBOR(item []byte) error {
	if majorType(item) != majorUint {
		return errNotUint
	}
	info, rest := item[0]&0x1f, item[1:]
	n := 0 // bytes of argument following the initial byte
	switch {
	case info < 24:
		if len(rest) != 0 {
			return errNotUint
		}
		*u = wireUint(info)
		return nil
	case info <= 27:
		n = 1 << (info - 24)
	default:
		return errNotUint
	}
	if len(rest) != n {
		return errNotUint
	}
	var buf [8]byte
	copy(buf[8-n:], rest)
	*u = wireUint(binary.BigEndian.Uint64(buf[:]))
	return nil
}

// inputWire is `[tx_id, index]` as decoded; the index is range-checked
// before it becomes a TxIn.
type inputWire struct {
	_     struct{} `cbor:",toarray"`
	TxID  bytes32
	Index uint64
}

// witnessWire is `[vkey, signature]`.
type witnessWire struct {
	_         struct{} `cbor:",toarray"`
	VKey      bytes32
	Signature bytes64
}

// bytes32 and bytes64 are byte strings of exactly that length. (The cbor
// package would silently truncate or zero-pad a plain [N]byte.)
type (
	bytes32 [32]byte
	bytes64 [64]byte
)

func (b *bytes32) UnmarshalBinary(v []byte) error { return fillFixed(b[:], v) }
func (b *bytes64) UnmarshalBinary(v []byte) error { return fillFixed(b[:], v) }

func fillFixed(dst, v []byte) error {
	if len(v) != len(dst) {
		return fmt.Errorf("byte string of %d bytes, want %d", len(v), len(dst))
	}
	copy(dst, v)
	return nil
}

func hash256(b []byte) [32]byte { return blake2b.Sum256(b) }
