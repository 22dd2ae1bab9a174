package ledger

import "errors"

// Decoding errors. DecodeTx wraps exactly one of these, or of the
// auxiliary data rules below.
var (
	// ErrMalformed: the bytes are not a well-formed transaction of the
	// supported shape (bad CBOR, wrong types, wrong lengths, missing keys).
	ErrMalformed = errors.New("ledger: malformed transaction")
	// ErrUnsupported: a well-formed Conway feature this ledger does not
	// implement (certificates, multi-assets, scripts, …); the wrapping error
	// names the feature.
	ErrUnsupported = errors.New("ledger: unsupported feature")
)

// Rule failures (docs/protocol.md, "Wire formats"). Apply and Reapply wrap exactly one of these,
// with the detail (which input, which amounts).
var (
	ErrTxTooLarge        = errors.New("ledger: tx larger than max tx size")
	ErrInputsEmpty       = errors.New("ledger: tx has no inputs")
	ErrDuplicateInput    = errors.New("ledger: tx spends an input twice")
	ErrExpired           = errors.New("ledger: tx expired (slot ≥ ttl)")
	ErrNotYetValid       = errors.New("ledger: tx not yet valid (slot < validity start)")
	ErrWrongNetwork      = errors.New("ledger: output address on wrong network")
	ErrOutputTooSmall    = errors.New("ledger: output below minimum coin")
	ErrFeeTooSmall       = errors.New("ledger: fee below minimum")
	ErrInputNotInUTxO    = errors.New("ledger: input not in UTxO")
	ErrValueNotConserved = errors.New("ledger: inputs ≠ outputs + fee")
	ErrBadWitness        = errors.New("ledger: witness signature does not verify")
	ErrMissingWitness    = errors.New("ledger: input's payment key has no witness")
)

// Auxiliary data rules (docs/protocol.md, "Wire formats"). They need
// nothing but the tx's bytes, so DecodeTx checks them, where it has the
// auxiliary data's original bytes at hand, and wraps exactly one of these
// with the detail; Cardano's UTXOW rule names them MissingTxBodyMetadataHash,
// MissingTxMetadata, ConflictingMetadataHash and InvalidMetadata.
var (
	ErrAuxDataHashMissing  = errors.New("ledger: auxiliary data without its hash in the body (key 7)")
	ErrAuxDataMissing      = errors.New("ledger: auxiliary data hash in the body (key 7) without auxiliary data")
	ErrAuxDataHashMismatch = errors.New("ledger: auxiliary data hash (body key 7) is not the hash of the auxiliary data")
	ErrMetadataInvalid     = errors.New("ledger: metadata invalid (bytes or text over 64 bytes, or nested too deep)")
)

// Rule is one way a tx fails the ledger: a decoding failure or a rule
// failure above. The zero Rule is none; RuleOf and RuleByCode give the others.
type Rule struct{ index int }

// RuleClass says whether a rule's failure proves a tx invalid for good.
type RuleClass uint8

const (
	// Stateless: the tx is invalid whatever the UTxO and the slot (its
	// shape, fee, value, signatures); no honest node admits it.
	Stateless RuleClass = iota + 1
	// Stateful: the failure depends on the UTxO or the slot, so the same tx
	// may be valid on another node's chain or later (or was earlier).
	Stateful
)

// rules lists every decoding and rule failure with its code and class,
// once. Codes are stable: clients (the submit API's 400 answers) match on
// them, never on the wording. Index 0 is no rule.
var rules = [...]struct {
	err   error
	code  string
	class RuleClass
}{
	{},
	{ErrMalformed, "malformed", Stateless},
	{ErrUnsupported, "unsupported", Stateless},
	{ErrTxTooLarge, "tx-too-large", Stateless},
	{ErrInputsEmpty, "inputs-empty", Stateless},
	{ErrDuplicateInput, "duplicate-input", Stateless},
	{ErrExpired, "expired", Stateful},
	{ErrNotYetValid, "not-yet-valid", Stateful},
	{ErrWrongNetwork, "wrong-network", Stateless},
	{ErrOutputTooSmall, "output-too-small", Stateless},
	{ErrFeeTooSmall, "fee-too-small", Stateless},
	{ErrInputNotInUTxO, "input-missing", Stateful},
	{ErrValueNotConserved, "value-not-conserved", Stateless},
	{ErrBadWitness, "bad-witness", Stateless},
	{ErrMissingWitness, "missing-witness", Stateless},
	// Added after the rules above, so that their indices stay.
	{ErrAuxDataHashMissing, "aux-data-hash-missing", Stateless},
	{ErrAuxDataMissing, "aux-data-missing", Stateless},
	{ErrAuxDataHashMismatch, "aux-data-hash-mismatch", Stateless},
	{ErrMetadataInvalid, "metadata-invalid", Stateless},
}

// NumRules is the number of Rules; Rule.Index is below it.
const NumRules = len(rules) - 1

// RuleOf returns the rule err reports (err wraps its sentinel), or false
// when err is no ledger failure (a UTxO read failing says nothing of the tx).
func RuleOf(err error) (Rule, bool) {
	if err == nil {
		return Rule{}, false
	}
	for i := 1; i < len(rules); i++ {
		if errors.Is(err, rules[i].err) {
			return Rule{i}, true
		}
	}
	return Rule{}, false
}

// Rules are every rule, in Index order.
func Rules() []Rule {
	all := make([]Rule, NumRules)
	for i := range all {
		all[i] = Rule{i + 1}
	}
	return all
}

// RuleByCode returns the rule with this code, or false.
func RuleByCode(code string) (Rule, bool) {
	for i := 1; i < len(rules); i++ {
		if rules[i].code == code {
			return Rule{i}, true
		}
	}
	return Rule{}, false
}

// Code is the rule's stable name, e.g. "bad-witness"; "" for no rule.
func (r Rule) Code() string { return rules[r.index].code }

// Class says whether the rule's failure holds whatever the ledger state.
func (r Rule) Class() RuleClass { return rules[r.index].class }

// Err is the rule's sentinel error; its text is the rule's wording.
func (r Rule) Err() error { return rules[r.index].err }

// Index is the rule's place among the NumRules rules, from 0, for
// counting by rule in an array.
func (r Rule) Index() int { return r.index - 1 }
