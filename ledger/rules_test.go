package ledger

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"
)

// ruleFixture is a small UTxO: in1 (10 ADA) owned by k1, in2 (20 ADA)
// owned by k2.
type ruleFixture struct {
	p        Params
	k1, k2   ed25519.PrivateKey
	in1, in2 TxIn
	utxo     MapUTxO
}

func newRuleFixture() ruleFixture {
	f := ruleFixture{p: DefaultParams(), k1: testKey(1), k2: testKey(2)}
	f.in1 = TxIn{TxID: [32]byte{1}, Index: 0}
	f.in2 = TxIn{TxID: [32]byte{2}, Index: 7}
	f.utxo = MapUTxO{
		f.in1: {Address: addrOf(f.k1), Coin: 10_000_000},
		f.in2: {Address: BaseAddress(0, KeyHash(f.k2.Public().(ed25519.PublicKey)), [28]byte{9}), Coin: 20_000_000},
	}
	return f
}

// balanced builds a tx spending inputs (worth total) to b's outputs and a
// last output at to taking the rest, paying exactly the minimum fee plus
// extraFee, with coinDelta added to the last output (to break conservation
// on purpose).
func (f ruleFixture) balanced(t *testing.T, b TxBody, total uint64, to []byte, extraFee uint64, coinDelta int64, keys ...ed25519.PrivateKey) *Tx {
	t.Helper()
	rest := total
	for _, o := range b.Outputs {
		rest -= o.Coin
	}
	b.Outputs = append(append([]TxOut(nil), b.Outputs...), TxOut{Address: to, Coin: rest})
	last := &b.Outputs[len(b.Outputs)-1]
	fee, err := b.MinFee(f.p, len(keys))
	if err != nil {
		t.Fatal(err)
	}
	b.Fee = fee + extraFee
	last.Coin = uint64(int64(rest-b.Fee) + coinDelta)
	tx, err := b.Build(keys)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// corruptSignature returns tx with witness w's signature altered.
func corruptSignature(t *testing.T, tx *Tx, w int) *Tx {
	t.Helper()
	raw := bytes.Clone(tx.Bytes())
	sig := tx.Witnesses[w].Signature
	i := bytes.Index(raw, sig[:])
	raw[i+5] ^= 0x01
	bad, err := DecodeTx(raw)
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// withExtraWitness returns tx carrying one more witness by key, signed over
// the wrong message.
func withExtraWitness(t *testing.T, tx *Tx, key ed25519.PrivateKey) *Tx {
	t.Helper()
	ws := witnessSetWire{}
	for _, w := range tx.Witnesses {
		ws.VKeys = append(ws.VKeys, witnessArray{VKey: w.VKey[:], Signature: w.Signature[:]})
	}
	ws.VKeys = append(ws.VKeys, witnessArray{VKey: key.Public().(ed25519.PublicKey), Signature: ed25519.Sign(key, []byte("not the tx id"))})
	raw, err := assemble(tx.BodyBytes(), ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeTx(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRules(t *testing.T) {
	f := newRuleFixture()
	both := TxBody{Inputs: []TxIn{f.in1, f.in2}}
	one := TxBody{Inputs: []TxIn{f.in1}}
	to := addrOf(f.k2)
	const slot = 100

	valid := f.balanced(t, both, 30_000_000, to, 0, 0, f.k1, f.k2)
	tests := []struct {
		name     string
		tx       *Tx
		params   func(*Params)
		want     error // from Apply
		reapply  error // from Reapply; nil unless the rule survives revalidation
		witnessy bool  // a witness rule: Reapply accepts
	}{
		{name: "valid", tx: valid},
		{name: "valid, ttl and start bracket the slot", tx: f.balanced(t, TxBody{Inputs: one.Inputs, TTL: ptr(slot + 1), ValidityStart: ptr(slot)}, 10_000_000, to, 0, 0, f.k1)},
		{name: "valid, overpaid fee", tx: f.balanced(t, one, 10_000_000, to, 12345, 0, f.k1)},
		{name: "valid, spare witness", tx: f.balanced(t, one, 10_000_000, to, 0, 0, f.k1, f.k2)},
		{name: "too large", tx: valid, params: func(p *Params) { p.MaxTxSize = uint64(valid.Size() - 1) }, want: ErrTxTooLarge},
		{name: "no inputs", tx: f.balanced(t, TxBody{}, 10_000_000, to, 0, 0, f.k1), want: ErrInputsEmpty},
		{name: "duplicate input", tx: f.balanced(t, TxBody{Inputs: []TxIn{f.in1, f.in1}}, 20_000_000, to, 0, 0, f.k1), want: ErrDuplicateInput},
		{name: "expired at ttl", tx: f.balanced(t, TxBody{Inputs: one.Inputs, TTL: ptr(slot)}, 10_000_000, to, 0, 0, f.k1), want: ErrExpired},
		{name: "not yet valid", tx: f.balanced(t, TxBody{Inputs: one.Inputs, ValidityStart: ptr(slot + 1)}, 10_000_000, to, 0, 0, f.k1), want: ErrNotYetValid},
		{name: "wrong network", tx: f.balanced(t, one, 10_000_000, EnterpriseAddress(1, [28]byte{5}), 0, 0, f.k1), want: ErrWrongNetwork},
		{name: "output too small", tx: f.balanced(t, TxBody{Inputs: one.Inputs, Outputs: []TxOut{{Address: to, Coin: MinOutputCoin(f.p, to) - 1}}}, 10_000_000, to, 0, 0, f.k1), want: ErrOutputTooSmall},
		{name: "output at the minimum", tx: f.balanced(t, TxBody{Inputs: one.Inputs, Outputs: []TxOut{{Address: to, Coin: MinOutputCoin(f.p, to)}}}, 10_000_000, to, 0, 0, f.k1)},
		{name: "input not in utxo", tx: f.balanced(t, TxBody{Inputs: []TxIn{{TxID: [32]byte{3}}}}, 10_000_000, to, 0, 0, f.k1), want: ErrInputNotInUTxO},
		{name: "outputs exceed inputs", tx: f.balanced(t, one, 10_000_000, to, 0, 1, f.k1), want: ErrValueNotConserved},
		{name: "inputs exceed outputs", tx: f.balanced(t, one, 10_000_000, to, 0, -1, f.k1), want: ErrValueNotConserved},
		{name: "unsigned", tx: f.balanced(t, one, 10_000_000, to, 0, 0), want: ErrMissingWitness, witnessy: true},
		{name: "signed by the wrong key", tx: f.balanced(t, one, 10_000_000, to, 0, 0, f.k2), want: ErrMissingWitness, witnessy: true},
		{name: "base address input unsigned", tx: f.balanced(t, both, 30_000_000, to, 0, 0, f.k1), want: ErrMissingWitness, witnessy: true},
		{name: "bad signature", tx: corruptSignature(t, f.balanced(t, one, 10_000_000, to, 0, 0, f.k1), 0), want: ErrBadWitness, witnessy: true},
		{name: "extra witness that does not verify", tx: withExtraWitness(t, f.balanced(t, one, 10_000_000, to, 10_000, 0, f.k1), f.k2), want: ErrBadWitness, witnessy: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := f.p
			if tt.params != nil {
				tt.params(&p)
			}
			d, err := Apply(p, f.utxo, slot, tt.tx)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Apply: err = %v, want %v", err, tt.want)
			}
			rd, rerr := Reapply(p, f.utxo, slot, tt.tx)
			wantReapply := tt.want
			if tt.witnessy {
				wantReapply = nil
			}
			if !errors.Is(rerr, wantReapply) || (wantReapply == nil) != (rerr == nil) {
				t.Fatalf("Reapply: err = %v, want %v", rerr, wantReapply)
			}
			if err == nil {
				checkDiff(t, f.utxo, tt.tx, d)
				checkDiff(t, f.utxo, tt.tx, rd)
			}
		})
	}
}

// Fee too small, at the boundary: the least fee passes, one lovelace less
// (the output absorbing it, so value is conserved) fails.
func TestRuleFeeTooSmall(t *testing.T) {
	f := newRuleFixture()
	// 9 ADA encodes as long as the final output coin, so the size is final.
	b := TxBody{Inputs: []TxIn{f.in1}, Outputs: []TxOut{{Address: addrOf(f.k1), Coin: 9_000_000}}}
	fee, err := b.MinFee(f.p, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fee  uint64
		want error
	}{{fee, nil}, {fee - 1, ErrFeeTooSmall}} {
		b.Fee, b.Outputs[0].Coin = tc.fee, 10_000_000-tc.fee
		tx, err := b.Build(signers(f.k1))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Apply(f.p, f.utxo, 0, tx); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("fee %d (minimum %d): err = %v, want %v", tc.fee, fee, err, tc.want)
		}
	}
}

// checkDiff: the diff spends exactly tx's inputs, recording the outputs
// they were, and creates its outputs.
func checkDiff(t *testing.T, before MapUTxO, tx *Tx, d *Diff) {
	t.Helper()
	if len(d.Deletes) != len(tx.Inputs) || len(d.Inserts) != len(tx.Outputs) {
		t.Fatalf("diff: %d deletes, %d inserts", len(d.Deletes), len(d.Inserts))
	}
	for _, in := range tx.Inputs {
		if spent, ok := d.Deletes[in]; !ok || !equalTxOut(spent, before[in]) {
			t.Errorf("input %s not spent, or not as the output it was: %v %v, was %v", in, spent, ok, before[in])
		}
	}
	for i, out := range tx.Outputs {
		got, ok := d.Inserts[TxIn{TxID: tx.ID(), Index: uint32(i)}]
		if !ok || got.Coin != out.Coin || !bytes.Equal(got.Address, out.Address) {
			t.Errorf("output %d: %v %v", i, got, ok)
		}
	}
}

func TestApplyTxs(t *testing.T) {
	f := newRuleFixture()
	// tx1 spends in1 to k2; tx2 spends tx1's output and in2 to k1 (a chain
	// within one sequence).
	tx1, err := BuildPayment(f.p, []TxIn{f.in1}, 10_000_000, nil, addrOf(f.k2), nil, signers(f.k1))
	if err != nil {
		t.Fatal(err)
	}
	mid := TxIn{TxID: tx1.ID(), Index: 0}
	tx2, err := BuildPayment(f.p, []TxIn{mid, f.in2}, tx1.Outputs[0].Coin+20_000_000, nil, addrOf(f.k1), nil, signers(f.k2))
	if err != nil {
		t.Fatal(err)
	}
	for _, reapply := range []bool{false, true} {
		d, err := ApplyTxs(f.p, f.utxo, 0, [][]byte{tx1.Bytes(), tx2.Bytes()}, reapply)
		if err != nil {
			t.Fatal(err)
		}
		// The intermediate output was created and spent within the diff.
		if _, ok := d.Inserts[mid]; ok || len(d.Inserts) != 1 || len(d.Deletes) != 2 || d.Txs != 2 {
			t.Fatalf("combined diff %+v", d)
		}
		out, ok, _ := Overlay{Base: f.utxo, Diffs: []*Diff{d}}.Lookup(TxIn{TxID: tx2.ID()})
		if !ok || out.Coin != tx2.Outputs[0].Coin {
			t.Fatalf("final output %v %v", out, ok)
		}
	}

	// Out of order, tx2's input does not exist yet; the error names index 0.
	_, err = ApplyTxs(f.p, f.utxo, 0, [][]byte{tx2.Bytes(), tx1.Bytes()}, false)
	if !errors.Is(err, ErrInputNotInUTxO) || !bytes.Contains([]byte(err.Error()), []byte("tx 0 ")) {
		t.Fatalf("err = %v", err)
	}
	// A replayed tx fails at its second occurrence.
	_, err = ApplyTxs(f.p, f.utxo, 0, [][]byte{tx1.Bytes(), tx1.Bytes()}, true)
	if !errors.Is(err, ErrInputNotInUTxO) || !bytes.Contains([]byte(err.Error()), []byte("tx 1 ")) {
		t.Fatalf("err = %v", err)
	}
	// Undecodable bytes name their index too.
	_, err = ApplyTxs(f.p, f.utxo, 0, [][]byte{tx1.Bytes(), {0x80}}, false)
	if !errors.Is(err, ErrMalformed) || !bytes.Contains([]byte(err.Error()), []byte("tx 1:")) {
		t.Fatalf("err = %v", err)
	}
	// Apply, unlike reapply, checks the witnesses of every tx in the sequence.
	unsigned, err := BuildPayment(f.p, []TxIn{f.in2}, 20_000_000, nil, addrOf(f.k1), nil, signers(f.k1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyTxs(f.p, f.utxo, 0, [][]byte{unsigned.Bytes()}, false); !errors.Is(err, ErrMissingWitness) {
		t.Fatalf("apply: err = %v", err)
	}
	if _, err := ApplyTxs(f.p, f.utxo, 0, [][]byte{unsigned.Bytes()}, true); err != nil {
		t.Fatalf("reapply: err = %v", err)
	}
}
