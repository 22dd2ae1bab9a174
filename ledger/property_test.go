package ledger

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"errors"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// propWorld is the state of the property test: keys, the UTxO as a model
// map, and the txs applied so far.
type propWorld struct {
	p     Params
	keys  []ed25519.PrivateKey
	owner map[string]int // address → index of its key
	utxo  MapUTxO
}

func newPropWorld(t *rapid.T) *propWorld {
	w := &propWorld{p: DefaultParams(), owner: map[string]int{}, utxo: MapUTxO{}}
	nKeys := rapid.IntRange(1, 4).Draw(t, "keys")
	for i := range nKeys {
		k := testKey(byte(i + 1))
		w.keys = append(w.keys, k)
		w.owner[string(addrOf(k))] = i
		// The base address of the same payment key is owned by it too.
		w.owner[string(BaseAddress(0, KeyHash(k.Public().(ed25519.PublicKey)), [28]byte{byte(i)}))] = i
	}
	for i := range rapid.IntRange(1, 6).Draw(t, "initial outputs") {
		in := TxIn{TxID: [32]byte{0xee, byte(i)}, Index: rapid.Uint32Range(0, 3).Draw(t, "index")}
		w.utxo[in] = TxOut{Address: w.address(t, "initial owner"), Coin: rapid.Uint64Range(3_000_000, 1_000_000_000).Draw(t, "coin")}
	}
	return w
}

func (w *propWorld) address(t *rapid.T, label string) []byte {
	addrs := slices.Sorted(maps.Keys(w.owner))
	return []byte(rapid.SampledFrom(addrs).Draw(t, label))
}

// sortedInputs lists the unspent inputs in a fixed order, so draws replay.
func (w *propWorld) sortedInputs() []TxIn {
	return slices.SortedFunc(maps.Keys(w.utxo), func(a, b TxIn) int {
		return cmp.Or(bytes.Compare(a.TxID[:], b.TxID[:]), cmp.Compare(a.Index, b.Index))
	})
}

// drawTx draws a valid payment: 1–3 inputs, 0–3 payments (a fan-out) plus
// change, signed by the owners of the inputs. ok=false if the drawn inputs
// cannot pay for it.
func (w *propWorld) drawTx(t *rapid.T, slot uint64) (*Tx, bool) {
	avail := w.sortedInputs()
	n := rapid.IntRange(1, min(3, len(avail))).Draw(t, "inputs")
	perm := rapid.Permutation(avail).Draw(t, "input order")
	inputs := perm[:n]
	var total uint64
	var keys []ed25519.PrivateKey
	seen := map[int]bool{}
	for _, in := range inputs {
		out := w.utxo[in]
		total += out.Coin
		if k := w.owner[string(out.Address)]; !seen[k] {
			seen[k] = true
			keys = append(keys, w.keys[k])
		}
	}
	var outputs []TxOut
	for range rapid.IntRange(0, 3).Draw(t, "payments") {
		to := w.address(t, "payee")
		outputs = append(outputs, TxOut{Address: to, Coin: MinOutputCoin(w.p, to) + rapid.Uint64Range(0, 5_000_000).Draw(t, "extra")})
	}
	var ttl *uint64
	if rapid.Bool().Draw(t, "has ttl") {
		ttl = ptr(slot + rapid.Uint64Range(1, 100).Draw(t, "ttl"))
	}
	tx, err := BuildPayment(w.p, inputs, total, outputs, w.address(t, "change"), ttl, keys)
	if err != nil {
		return nil, false // the inputs are too poor for these payments
	}
	return tx, true
}

func equalDiffs(a, b *Diff) bool {
	return maps.EqualFunc(a.Deletes, b.Deletes, equalTxOut) && maps.EqualFunc(a.Inserts, b.Inserts, equalTxOut)
}

func equalTxOut(a, b TxOut) bool { return a.Coin == b.Coin && bytes.Equal(a.Address, b.Address) }

// materialize applies d to base.
func materialize(base MapUTxO, d *Diff) MapUTxO {
	m := maps.Clone(base)
	for in := range d.Deletes {
		delete(m, in)
	}
	maps.Copy(m, d.Inserts)
	return m
}

// A random sequence of valid txs (chains and fan-outs): Apply accepts each,
// Reapply gives the same diff, and applying the whole sequence with and
// without signature checks reaches the same state as the step-by-step model.
func TestPropertyApplyReapplyAgree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newPropWorld(t)
		initial := maps.Clone(w.utxo)
		const slot = 1000
		var raws [][]byte
		for range rapid.IntRange(1, 12).Draw(t, "txs") {
			tx, ok := w.drawTx(t, slot)
			if !ok {
				continue
			}
			d, err := Apply(w.p, w.utxo, slot, tx)
			if err != nil {
				t.Fatalf("Apply refused a built tx: %v", err)
			}
			rd, err := Reapply(w.p, w.utxo, slot, tx)
			if err != nil || !equalDiffs(d, rd) {
				t.Fatalf("Reapply disagrees: %v", err)
			}
			w.utxo = materialize(w.utxo, d)
			raws = append(raws, tx.Bytes())
		}
		applied, err := ApplyTxs(w.p, initial, slot, raws, false)
		if err != nil {
			t.Fatalf("ApplyTxs: %v", err)
		}
		reapplied, err := ApplyTxs(w.p, initial, slot, raws, true)
		if err != nil {
			t.Fatalf("ApplyTxs reapply: %v", err)
		}
		if !equalDiffs(applied, reapplied) {
			t.Fatal("apply-all and reapply-all diffs differ")
		}
		if final := materialize(initial, applied); !maps.EqualFunc(final, w.utxo, equalTxOut) {
			t.Fatalf("apply-all state (%d entries) differs from the model (%d)", len(final), len(w.utxo))
		}
		var total, want uint64
		for _, o := range initial {
			want += o.Coin
		}
		for _, o := range w.utxo {
			total += o.Coin
		}
		if total > want {
			t.Fatalf("value created: %d > %d", total, want)
		}
	})
}

// Txs that may break rules (unsigned, signed by a stranger, expired, spending
// spent outputs, unbalanced): whatever Apply accepts, Reapply accepts with
// the same diff; and where they differ it is only on a witness rule.
func TestPropertyReapplyWeakerThanApply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newPropWorld(t)
		spent := MapUTxO{}
		slot := rapid.Uint64Range(0, 200).Draw(t, "slot")
		for range rapid.IntRange(1, 10).Draw(t, "txs") {
			tx, ok := w.drawTx(t, 100)
			if !ok {
				continue
			}
			tx = mutate(t, w, tx, spent)
			d, err := Apply(w.p, w.utxo, slot, tx)
			rd, rerr := Reapply(w.p, w.utxo, slot, tx)
			switch {
			case err == nil && (rerr != nil || !equalDiffs(d, rd)):
				t.Fatalf("Apply accepted, Reapply: %v", rerr)
			case err != nil && rerr == nil && !isWitnessRule(err):
				t.Fatalf("Reapply accepted what Apply refused for a non-witness rule: %v", err)
			case err != nil && rerr != nil && err.Error() != rerr.Error():
				t.Fatalf("different reasons: %v / %v", err, rerr)
			}
			if err == nil {
				for in := range d.Deletes {
					spent[in] = w.utxo[in]
				}
				w.utxo = materialize(w.utxo, d)
			}
		}
	})
}

func isWitnessRule(err error) bool {
	return errors.Is(err, ErrMissingWitness) || errors.Is(err, ErrBadWitness)
}

// mutate maybe breaks tx: rebuild it unsigned or signed by a stranger, or
// with a spent input, or unbalanced, or re-sign it unchanged.
func mutate(t *rapid.T, w *propWorld, tx *Tx, spent MapUTxO) *Tx {
	b := TxBody{Inputs: tx.Inputs, Outputs: tx.Outputs, Fee: tx.Fee, TTL: tx.TTL, ValidityStart: tx.ValidityStart}
	var keys []ed25519.PrivateKey
	for _, in := range tx.Inputs {
		keys = append(keys, w.keys[w.owner[string(w.utxo[in].Address)]])
	}
	keys = slices.CompactFunc(keys, func(a, b ed25519.PrivateKey) bool { return a.Equal(b) })
	switch rapid.IntRange(0, 5).Draw(t, "mutation") {
	case 0:
		return tx
	case 1:
		keys = nil
	case 2:
		keys = []ed25519.PrivateKey{testKey(0xaa)}
	case 3:
		if len(spent) > 0 {
			in := rapid.SampledFrom(slices.SortedFunc(maps.Keys(spent), func(a, b TxIn) int {
				return cmp.Or(bytes.Compare(a.TxID[:], b.TxID[:]), cmp.Compare(a.Index, b.Index))
			})).Draw(t, "spent input")
			b.Inputs = append(slices.Clone(b.Inputs), in)
		}
	case 4:
		b.Fee += rapid.Uint64Range(1, 10).Draw(t, "unbalance")
	case 5:
		b.ValidityStart = ptr(rapid.Uint64Range(0, 200).Draw(t, "start"))
	}
	out, err := b.Build(keys)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	return out
}
