package ledger

import (
	"encoding/hex"
	"fmt"
	"math/bits"
	"runtime"
)

// Apply checks every rule of docs/protocol.md, "Wire formats", for tx against utxo at slot,
// signatures included, and returns the diff the tx makes: its inputs spent,
// its outputs created at TxIn{tx.ID(), i}. utxo is only read.
func Apply(p Params, utxo UTxO, slot uint64, tx *Tx) (*Diff, error) {
	d := NewDiff()
	if err := applyInto(p, utxo, slot, tx, witnessCheck{}, d); err != nil {
		return nil, err
	}
	return d, nil
}

// Reapply is Apply without the witness checks, for revalidating a tx that
// Apply accepted before against a newer UTxO (a mempool resync).
//
// Skipping the witnesses is safe: they are part of the tx bytes, which are
// unchanged, and are signatures over the tx id, which is unchanged; and the
// keys they must match come from the addresses of the spent outputs, which
// are unchanged too, because a TxIn names one output forever (its tx id is a
// hash committing to the output). What can change is whether the inputs are
// still unspent, and the slot: those rules Reapply checks.
func Reapply(p Params, utxo UTxO, slot uint64, tx *Tx) (*Diff, error) {
	d := NewDiff()
	if err := applyInto(p, utxo, slot, tx, witnessCheck{skip: true}, d); err != nil {
		return nil, err
	}
	return d, nil
}

// ApplyTxs decodes and applies a sequence of txs (a block body, an EB
// closure), each seeing the effect of the ones before it, and returns their
// combined diff, which counts them in Txs. reapply skips the witness checks
// (see Reapply) for txs this node validated before. An error names the index
// of the failing tx.
func ApplyTxs(p Params, utxo UTxO, slot uint64, txs [][]byte, reapply bool) (*Diff, error) {
	return ApplyTxsVerified(p, utxo, slot, txs, func(*Tx) bool { return reapply })
}

// ApplyTxsVerified is ApplyTxs where verified says, tx by tx, whether this
// node already checked the tx's witnesses (a tx its mempool admitted): those
// are skipped for it, every other rule still applies. verified must be safe
// for concurrent use.
//
// The txs are decoded, and the witness signatures of the others verified,
// ahead on up to GOMAXPROCS goroutines (see verifyAhead), before the txs are
// applied in order; the result, the diff or the error, is the one of
// applying them one by one.
func ApplyTxsVerified(p Params, utxo UTxO, slot uint64, txs [][]byte, verified func(*Tx) bool) (*Diff, error) {
	return applyTxs(p, utxo, slot, txs, verified, runtime.GOMAXPROCS(0))
}

// applyTxs is ApplyTxsVerified with the work ahead on up to workers
// goroutines.
func applyTxs(p Params, utxo UTxO, slot uint64, txs [][]byte, verified func(*Tx) bool, workers int) (*Diff, error) {
	return applyBatch(p, utxo, slot, decodeAhead(txs, verified, workers))
}

// BatchTx is a decoded tx of a batch to apply, and whether this node has
// verified its witnesses already (its mempool admitted it, or a closure
// check applied it in full): then the batch skips them.
type BatchTx struct {
	Tx       *Tx
	Verified bool
}

// ApplyBatch applies decoded txs in order, each seeing the effect of the
// ones before it, and returns their combined diff: ApplyTxsVerified for txs
// decoded already (a closure whose txs the mempool holds). The witness
// signatures of the txs not Verified are verified ahead on up to
// GOMAXPROCS goroutines; the result is the one of applying them one by one.
func ApplyBatch(p Params, utxo UTxO, slot uint64, txs []BatchTx) (*Diff, error) {
	items := make([]decodedTx, len(txs))
	for i, t := range txs {
		items[i] = decodedTx{tx: t.Tx, witnesses: witnessCheck{skip: t.Verified}}
	}
	verifyAhead(items, runtime.GOMAXPROCS(0))
	return applyBatch(p, utxo, slot, items)
}

// applyBatch applies txs, decoded and their witnesses checked ahead, in
// order; a decoding error counts at its tx's turn.
func applyBatch(p Params, utxo UTxO, slot uint64, txs []decodedTx) (*Diff, error) {
	combined := NewDiff()
	view := Overlay{Base: utxo, Diffs: []*Diff{combined}}
	for i, d := range txs {
		if d.err != nil {
			return nil, fmt.Errorf("tx %d: %w", i, d.err)
		}
		// Every rule is checked before applyInto writes, so a failing tx
		// leaves combined as it was (and it is dropped anyway).
		if err := applyInto(p, view, slot, d.tx, d.witnesses, combined); err != nil {
			return nil, fmt.Errorf("tx %d (%s): %w", i, hex.EncodeToString(d.tx.id[:]), err)
		}
	}
	return combined, nil
}

// witnessCheck is how applyInto checks a tx's witnesses.
type witnessCheck struct {
	// skip: the witnesses were checked before (Reapply, a tx the mempool
	// admitted), no witness rule applies.
	skip bool
	// verified: the signatures were verified ahead, with result sigErr;
	// applyInto checks that the right keys witnessed and reports sigErr
	// after that, where it would have verified them.
	verified bool
	sigErr   error
}

// applyInto checks the rules, then records the tx's effect in d. It writes
// nothing unless every rule holds.
func applyInto(p Params, utxo UTxO, slot uint64, tx *Tx, witnesses witnessCheck, d *Diff) error {
	if uint64(tx.Size()) > p.MaxTxSize {
		return fmt.Errorf("%w: %d bytes, max %d", ErrTxTooLarge, tx.Size(), p.MaxTxSize)
	}
	if len(tx.Inputs) == 0 {
		return ErrInputsEmpty
	}
	if err := checkDistinct(tx.Inputs); err != nil {
		return err
	}
	if tx.TTL != nil && slot >= *tx.TTL {
		return fmt.Errorf("%w: slot %d, ttl %d", ErrExpired, slot, *tx.TTL)
	}
	if tx.ValidityStart != nil && slot < *tx.ValidityStart {
		return fmt.Errorf("%w: slot %d, validity start %d", ErrNotYetValid, slot, *tx.ValidityStart)
	}

	produced := tx.Fee
	for i, out := range tx.Outputs {
		if n := AddressNetwork(out.Address); n != p.NetworkID {
			return fmt.Errorf("%w: output %d on network %d, want %d", ErrWrongNetwork, i, n, p.NetworkID)
		}
		if least := p.MinOutputCoin(tx.outputSizes[i]); out.Coin < least {
			return fmt.Errorf("%w: output %d carries %d, minimum %d for %d bytes", ErrOutputTooSmall, i, out.Coin, least, tx.outputSizes[i])
		}
		var carry uint64
		if produced, carry = bits.Add64(produced, out.Coin, 0); carry != 0 {
			return fmt.Errorf("%w: outputs and fee overflow", ErrValueNotConserved)
		}
	}
	if least := p.MinFee(tx.Size()); tx.Fee < least {
		return fmt.Errorf("%w: fee %d, minimum %d for %d bytes", ErrFeeTooSmall, tx.Fee, least, tx.Size())
	}

	spent := make([]TxOut, len(tx.Inputs))
	var consumed uint64
	for i, in := range tx.Inputs {
		out, ok, err := utxo.Lookup(in)
		if err != nil {
			return fmt.Errorf("ledger: looking up input %s: %w", in, err)
		}
		if !ok {
			return fmt.Errorf("%w: %s", ErrInputNotInUTxO, in)
		}
		var carry uint64
		if consumed, carry = bits.Add64(consumed, out.Coin, 0); carry != 0 {
			return fmt.Errorf("%w: inputs overflow", ErrValueNotConserved)
		}
		spent[i] = out
	}
	if consumed != produced {
		return fmt.Errorf("%w: inputs %d, outputs + fee %d (fee %d)", ErrValueNotConserved, consumed, produced, tx.Fee)
	}

	if !witnesses.skip {
		if err := checkWitnessKeys(tx, spent); err != nil {
			return err
		}
		sigErr := witnesses.sigErr
		if !witnesses.verified {
			sigErr = verifySignatures(tx)
		}
		if sigErr != nil {
			return sigErr
		}
	}

	for i, in := range tx.Inputs {
		d.Delete(in, spent[i])
	}
	for i, out := range tx.Outputs {
		d.Insert(TxIn{TxID: tx.id, Index: uint32(i)}, out)
	}
	d.Txs++
	return nil
}

// checkDistinct fails on an input listed twice.
func checkDistinct(inputs []TxIn) error {
	seen := make(map[TxIn]struct{}, len(inputs))
	for _, in := range inputs {
		if _, dup := seen[in]; dup {
			return fmt.Errorf("%w: %s", ErrDuplicateInput, in)
		}
		seen[in] = struct{}{}
	}
	return nil
}

// checkWitnessKeys requires a witness for the payment key of every spent
// output. It is checked before any signature is verified (it is cheap), so
// a missing witness is the error a tx gets even if a signature is bad too.
func checkWitnessKeys(tx *Tx, spent []TxOut) error {
	provided := make(map[[28]byte]struct{}, len(tx.Witnesses))
	for _, w := range tx.Witnesses {
		provided[KeyHash(w.VKey[:])] = struct{}{}
	}
	for i, out := range spent {
		kh, err := PaymentKeyHash(out.Address)
		if err != nil {
			return fmt.Errorf("ledger: input %s: spent output's address: %w", tx.Inputs[i], err)
		}
		if _, ok := provided[kh]; !ok {
			return fmt.Errorf("%w: input %s needs key hash %s", ErrMissingWitness, tx.Inputs[i], hex.EncodeToString(kh[:]))
		}
	}
	return nil
}
