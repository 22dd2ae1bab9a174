package ledger

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
)

// TxBody is the content of a tx for the builder: tests, the devnet firehose
// and tooling. It is not validated; Apply judges the built tx.
type TxBody struct {
	Inputs        []TxIn
	Outputs       []TxOut
	Fee           uint64
	TTL           *uint64 // nil: no upper bound
	ValidityStart *uint64 // nil: no lower bound
	// AuxData is the tx's auxiliary data (see EncodeMetadata), nil for
	// none; the body's key 7 is its hash.
	AuxData []byte
}

// bodyWire is the builder's body encoding: a definite map with keys in
// ascending order, outputs in the legacy array form, inputs as a plain
// (untagged) array in the caller's order.
type bodyWire struct {
	Inputs        []TxIn        `cbor:"0,keyasint"`
	Outputs       []outputArray `cbor:"1,keyasint"`
	Fee           uint64        `cbor:"2,keyasint"`
	TTL           *uint64       `cbor:"3,keyasint,omitempty"`
	AuxDataHash   []byte        `cbor:"7,keyasint,omitempty"`
	ValidityStart *uint64       `cbor:"8,keyasint,omitempty"`
}

type outputArray struct {
	_       struct{} `cbor:",toarray"`
	Address []byte
	Coin    uint64
}

type witnessSetWire struct {
	VKeys []witnessArray `cbor:"0,keyasint,omitempty"`
}

type witnessArray struct {
	_         struct{} `cbor:",toarray"`
	VKey      []byte
	Signature []byte
}

// encode returns the canonical body bytes.
func (b TxBody) encode() ([]byte, error) {
	var auxDataHash []byte
	if b.AuxData != nil {
		h := AuxDataHash(b.AuxData)
		auxDataHash = h[:]
	}
	return b.encodeWith(auxDataHash)
}

// encodeWith returns the canonical body bytes with auxDataHash as key 7
// (none when nil).
func (b TxBody) encodeWith(auxDataHash []byte) ([]byte, error) {
	w := bodyWire{Inputs: b.Inputs, Outputs: make([]outputArray, len(b.Outputs)), Fee: b.Fee, TTL: b.TTL, ValidityStart: b.ValidityStart, AuxDataHash: auxDataHash}
	if w.Inputs == nil {
		w.Inputs = []TxIn{}
	}
	for i, o := range b.Outputs {
		w.Outputs[i] = outputArray{Address: o.Address, Coin: o.Coin}
	}
	return encMode.Marshal(w)
}

// assemble encodes `[body, witness_set, true, auxData / null]`.
func assemble(body []byte, ws witnessSetWire, auxData []byte) ([]byte, error) {
	wits, err := encMode.Marshal(ws)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 0, 1+len(body)+len(wits)+1+max(1, len(auxData)))
	raw = append(raw, 0x84) // array of 4
	raw = append(raw, body...)
	raw = append(raw, wits...)
	raw = append(raw, cborTrue)
	if auxData == nil {
		return append(raw, cborNull), nil
	}
	return append(raw, auxData...), nil
}

// Build encodes the body canonically, signs its id with every signer and
// returns the tx as DecodeTx sees it.
func (b TxBody) Build(signers []ed25519.PrivateKey) (*Tx, error) {
	body, err := b.encode()
	if err != nil {
		return nil, fmt.Errorf("ledger: encoding tx body: %w", err)
	}
	id := hash256(body)
	var ws witnessSetWire
	for _, key := range signers {
		if len(key) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("ledger: signing key of %d bytes", len(key))
		}
		ws.VKeys = append(ws.VKeys, witnessArray{VKey: key.Public().(ed25519.PublicKey), Signature: ed25519.Sign(key, id[:])})
	}
	raw, err := assemble(body, ws, b.AuxData)
	if err != nil {
		return nil, fmt.Errorf("ledger: encoding tx: %w", err)
	}
	return DecodeTx(raw)
}

// BuildTx builds and signs a payment tx (see TxBody.Build).
func BuildTx(inputs []TxIn, outputs []TxOut, fee uint64, ttl *uint64, signers []ed25519.PrivateKey) (*Tx, error) {
	return TxBody{Inputs: inputs, Outputs: outputs, Fee: fee, TTL: ttl}.Build(signers)
}

// SizeWith is the size of the tx Build returns when given that many
// signers, whoever they are: keys and signatures have fixed sizes, and so
// has the auxiliary data hash, which it therefore does not compute (the
// padding of a tx to a size asks for many sizes).
func (b TxBody) SizeWith(witnesses int) (int, error) {
	var auxDataHash []byte
	if b.AuxData != nil {
		auxDataHash = make([]byte, 32)
	}
	body, err := b.encodeWith(auxDataHash)
	if err != nil {
		return 0, fmt.Errorf("ledger: encoding tx body: %w", err)
	}
	ws := witnessSetWire{VKeys: make([]witnessArray, witnesses)}
	for i := range ws.VKeys {
		ws.VKeys[i] = witnessArray{VKey: make([]byte, ed25519.PublicKeySize), Signature: make([]byte, ed25519.SignatureSize)}
	}
	wits, err := encMode.Marshal(ws)
	if err != nil {
		return 0, fmt.Errorf("ledger: encoding tx: %w", err)
	}
	// As assemble lays them out: the array's head, body, witnesses,
	// is_valid, the auxiliary data or null.
	return 1 + len(body) + len(wits) + 1 + max(1, len(b.AuxData)), nil
}

// MinFee is the least fee this body can carry with that many witnesses:
// the fixed point of fee = a·size(tx with fee) + b. A larger fee can encode
// longer, which raises the minimum, so it iterates; the sequence only grows
// and stops within a few rounds. b.Fee is ignored.
func (b TxBody) MinFee(p Params, witnesses int) (uint64, error) {
	fee := uint64(0)
	for {
		b.Fee = fee
		size, err := b.SizeWith(witnesses)
		if err != nil {
			return 0, err
		}
		need := p.MinFee(size)
		if need <= fee {
			return fee, nil
		}
		fee = need
	}
}

// ErrCannotBalance is returned by BuildPayment when the inputs cannot pay
// for the outputs, the fee and a change output of at least the minimum.
var ErrCannotBalance = errors.New("ledger: inputs cannot cover outputs, fee and change")

// BuildPayment builds and signs a balanced tx: it spends inputs (worth
// inputTotal together) to outputs, pays the minimum fee, and sends the rest
// to a change output at changeAddress, appended last (see TxBody.Balance).
func BuildPayment(p Params, inputs []TxIn, inputTotal uint64, outputs []TxOut, changeAddress []byte, ttl *uint64, signers []ed25519.PrivateKey) (*Tx, error) {
	b, err := TxBody{Inputs: inputs, Outputs: outputs, TTL: ttl}.Balance(p, inputTotal, changeAddress, len(signers))
	if err != nil {
		return nil, err
	}
	return b.Build(signers)
}

// Balance is b with the minimum fee for that many witnesses and a change
// output at changeAddress, appended last, taking the rest of inputTotal
// (what b's inputs are worth together). The change output's coin changes
// the tx size and so the fee; the fee is iterated upward to a fixed point,
// and the change takes whatever the fee leaves. b's fee is ignored and its
// outputs are not modified.
func (b TxBody) Balance(p Params, inputTotal uint64, changeAddress []byte, witnesses int) (TxBody, error) {
	var paid uint64
	for _, o := range b.Outputs {
		if paid+o.Coin < paid {
			return TxBody{}, fmt.Errorf("%w: outputs overflow", ErrCannotBalance)
		}
		paid += o.Coin
	}
	b.Outputs = append(slices.Clip(b.Outputs), TxOut{Address: changeAddress})
	b.Fee = 0
	change := &b.Outputs[len(b.Outputs)-1]
	for {
		if inputTotal < paid || inputTotal-paid < b.Fee {
			return TxBody{}, fmt.Errorf("%w: inputs %d, outputs %d, fee %d", ErrCannotBalance, inputTotal, paid, b.Fee)
		}
		change.Coin = inputTotal - paid - b.Fee
		size, err := b.SizeWith(witnesses)
		if err != nil {
			return TxBody{}, err
		}
		need := p.MinFee(size)
		if need <= b.Fee {
			break
		}
		b.Fee = need
	}
	changeSize := len(mustEncode(outputArray{Address: change.Address, Coin: change.Coin}))
	if least := p.MinOutputCoin(changeSize); change.Coin < least {
		return TxBody{}, fmt.Errorf("%w: change %d below the output minimum %d", ErrCannotBalance, change.Coin, least)
	}
	return b, nil
}

// MinOutputCoin is the least coin an output to address can carry in the
// builder's (array) form: the fixed point of coin = coinsPerUTxOByte ·
// (160 + size(output with coin)).
func MinOutputCoin(p Params, address []byte) uint64 {
	coin := uint64(0)
	for {
		need := p.MinOutputCoin(len(mustEncode(outputArray{Address: address, Coin: coin})))
		if need <= coin {
			return coin
		}
		coin = need
	}
}

// mustEncode encodes values of this package's wire types, which always
// encode.
func mustEncode(v any) []byte {
	b, err := encMode.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("ledger: encoding %T: %v", v, err))
	}
	return b
}
