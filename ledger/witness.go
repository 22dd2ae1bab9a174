package ledger

import (
	"encoding/hex"
	"fmt"
	"iter"
	"runtime"
	"sync"

	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
)

// stdlibRules make curve25519-voi accept exactly the signatures
// crypto/ed25519.Verify accepts (the rules this ledger has always had), at
// about three quarters of its CPU. Each field, against what the standard
// library does:
//   - CofactorlessVerify: it computes R' = [S]B - [k]A and compares the
//     encoding of R' with the signature's R byte for byte. A cofactored
//     check ([8]R = [8]R') would also accept R' plus a small-order point.
//   - AllowNonCanonicalR false: follows from that byte comparison, as an
//     encoding is always canonical, so an R with y ≥ p, or with x = 0 and
//     the sign bit set, never matches.
//   - AllowSmallOrderR: it never looks at R's order; a small-order R
//     matches if the equation yields it.
//   - AllowSmallOrderA: it takes any point as a key, the identity and the
//     other small-order points included.
//   - AllowNonCanonicalA: its point decoding reads y ≥ p and x = 0 with
//     the sign bit set; the hash is over the key's bytes as sent.
//
// S must be below the group order in both, whatever the options.
//
// These are voi's VerifyOptionsStdLib (a test holds them equal), spelled
// out so that a change of the preset upstream cannot change the ledger.
//
// Batches are not verified by voi's BatchVerifier equation: a random
// linear combination of the signatures' equations can only be checked up
// to the cofactor, and then a signature whose R or A carries a small-order
// component passes where crypto/ed25519 refuses it (a test shows one);
// ruling such points out costs a scalar multiplication per point, about a
// verification, which is more than the batch equation saves. What a batch
// shares instead is the expanded form of a key that signs several of its
// witnesses (expandedKeys).
var stdlibRules = &voi.Options{Verify: &voi.VerifyOptions{
	AllowSmallOrderA:   true,
	AllowSmallOrderR:   true,
	AllowNonCanonicalA: true,
	AllowNonCanonicalR: false,
	CofactorlessVerify: true,
}}

// verifyWitness reports whether w's signature over msg verifies under
// stdlibRules; exp, when not nil, is w.VKey expanded.
func verifyWitness(w *VKeyWitness, msg []byte, exp *voi.ExpandedPublicKey) bool {
	if exp != nil {
		return voi.VerifyExpandedWithOptions(exp, msg, w.Signature[:], stdlibRules)
	}
	return voi.VerifyWithOptions(w.VKey[:], msg, w.Signature[:], stdlibRules)
}

// verifySignatures requires a valid signature over the tx id from every
// witness given. It reads nothing but the tx.
func verifySignatures(tx *Tx) error { return sharedKeys(nil).verify(tx) }

// badWitness is the error of tx's witness i not verifying.
func badWitness(tx *Tx, i int) error {
	return fmt.Errorf("%w: witness %d (vkey %s)", ErrBadWitness, i, hex.EncodeToString(tx.Witnesses[i].VKey[:]))
}

// Signatures is the verdict on the witness signatures of one tx, reached
// by VerifySignatures ahead of applying it: ApplyVerified applies the tx
// with it. The zero Signatures is no verdict.
type Signatures struct {
	tx  *Tx
	err error
}

// Tx is the tx the verdict is on.
func (s Signatures) Tx() *Tx { return s.tx }

// Err is the error Apply would give for the tx's signatures, should every
// other rule hold (an ErrBadWitness naming its first bad witness), or nil.
func (s Signatures) Err() error { return s.err }

// VerifySignatures verifies the witness signatures of txs that arrive
// together (a tx-submission reply, a batch of submits), on up to
// GOMAXPROCS goroutines, and returns a verdict for each tx, in order. The
// verdicts are those of Apply, tx by tx: a bad signature condemns its own
// tx only. The signatures need no ledger state, so this can run before the
// txs are applied, outside any lock; ApplyVerified then checks the rest.
func VerifySignatures(txs []*Tx) []Signatures {
	out := make([]Signatures, len(txs))
	keys := sharedKeys(func(yield func(*Tx) bool) {
		for _, tx := range txs {
			if !yield(tx) {
				return
			}
		}
	})
	inChunks(len(txs), runtime.GOMAXPROCS(0), func(i int) {
		out[i] = Signatures{tx: txs[i], err: keys.verify(txs[i])}
	})
	return out
}

// ApplyVerified is Apply for the tx of sigs, whose signatures
// VerifySignatures verified: every rule is checked as Apply checks it,
// in the same order, and sigs.Err is reported where Apply would have
// verified the signatures. A zero sigs is an error.
func ApplyVerified(p Params, utxo UTxO, slot uint64, sigs Signatures) (*Diff, error) {
	if sigs.tx == nil {
		return nil, fmt.Errorf("ledger: ApplyVerified without a verdict from VerifySignatures")
	}
	d := NewDiff()
	if err := applyInto(p, utxo, slot, sigs.tx, witnessCheck{verified: true, sigErr: sigs.err}, d); err != nil {
		return nil, err
	}
	return d, nil
}

// expandedKeys are the keys that witness at least expandFrom signatures
// of a batch, each expanded once, on first use, for all of them. A key
// used fewer times is verified unexpanded. Safe for concurrent use once
// built.
type expandedKeys map[[32]byte]*expandedKey

// expandFrom is the number of uses from which a key is expanded: expanding
// costs about a quarter of a verification and makes each verification with
// the key about a sixth cheaper, so it pays from the third.
const expandFrom = 3

type expandedKey struct {
	uses int
	once sync.Once
	exp  *voi.ExpandedPublicKey // nil: not a point; verified unexpanded, so refused as crypto/ed25519 refuses it
}

// sharedKeys counts the keys of the witnesses of txs (nil: none).
func sharedKeys(txs iter.Seq[*Tx]) expandedKeys {
	if txs == nil {
		return nil
	}
	keys := expandedKeys{}
	for tx := range txs {
		for i := range tx.Witnesses {
			k := keys[tx.Witnesses[i].VKey]
			if k == nil {
				k = &expandedKey{}
				keys[tx.Witnesses[i].VKey] = k
			}
			k.uses++
		}
	}
	return keys
}

// expanded is vkey expanded if it is shared, or nil.
func (keys expandedKeys) expanded(vkey *[32]byte) *voi.ExpandedPublicKey {
	k := keys[*vkey]
	if k == nil || k.uses < expandFrom {
		return nil
	}
	k.once.Do(func() {
		if exp, err := voi.NewExpandedPublicKey(vkey[:]); err == nil {
			k.exp = exp
		}
	})
	return k.exp
}

// verify is verifySignatures with the keys shared in keys expanded.
func (keys expandedKeys) verify(tx *Tx) error {
	for i := range tx.Witnesses {
		w := &tx.Witnesses[i]
		if !verifyWitness(w, tx.id[:], keys.expanded(&w.VKey)) {
			return badWitness(tx, i)
		}
	}
	return nil
}
