package load

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/ledger"
)

// txChain is the firehose's chain of txs from one funded address: each tx
// spends the single output of the one before it (the first spends the
// address's largest output when the firehose started) and pays it all, less the minimum fee, back to
// the address. Chains of different addresses never touch the same output,
// so they never conflict, and a chain's txs are ordered by construction.
//
// A chain is owned by one goroutine at a time: its node's submitter while
// the firehose runs, then the final check.
type txChain struct {
	name    string // the payment key's file name, e.g. payment-3
	node    int    // index of the node it is submitted to
	key     ed25519.PrivateKey
	address []byte

	// head is the output the chain's next tx spends, worth coin: the output
	// the chain started from, or the output of the last admitted tx.
	head ledger.TxIn
	coin uint64
	// pending are the txs built and not yet admitted, oldest first:
	// pending[0] spends head, and each after it the output of the one
	// before, so that a batch carries several of the chain's txs at once.
	pending []*pendingTx
	// givenUp counts the txs the chain sent, was refused for good (400)
	// and built anew: never admitted, no longer pending.
	givenUp uint64
	// admitted are the txs the node admitted, oldest first, less those it
	// dropped since (see recoverDropped).
	admitted []admittedTx
	// resubmit are admitted txs the node dropped, oldest first, to be sent
	// again before any new tx; retryAt holds the next POST back while the
	// node is behind the others; nodeDown says a POST got no answer, so the
	// submitter waits for the node to answer again.
	resubmit []admittedTx
	retryAt  time.Time
	nodeDown bool
	// missingSince is when the chain first found admitted txs in no
	// mempool and on no chain, until it finds them again or takes them as
	// dropped.
	missingSince time.Time
	// start is the output the chain started from, worth funds, for a
	// chain that goes back to its start.
	start ledger.TxIn
	funds uint64
	// floorTxs are the bytes of the chain's first admitted txs, up to
	// floorCap, in order: the sample the CPU floor is measured on (see
	// Firehose.FloorSample), which applies from start.
	floorTxs [][]byte
	floorCap int
	// floorBytes are the bytes of floorTxs, up to floorCapBytes.
	floorBytes, floorCapBytes int
	// window is how many of its last admitted txs the chain keeps to send
	// again (see resubmitWindow).
	window int
	// targets draws the size each new tx is padded to; nil: plain
	// payments (see TxSize).
	targets *txTargets
	// template makes the chain's plain payments without the ledger's
	// builder once it is checked; noTemplate says one made other bytes
	// than the ledger, so the chain builds with the ledger alone.
	// minCoin is the least coin of its change output.
	template   *txTemplate
	noTemplate bool
	minCoin    uint64
	// rejectedInARow counts the 400 answers since the last admission.
	rejectedInARow int
	// stopped says why the chain stopped; "" while it runs.
	stopped string
}

// pendingTx is a tx of a chain built and not yet admitted: submitted says
// it was sent at least once, first at firstSent, and answer is what its
// latest POST got; lastSent is when that POST began.
type pendingTx struct {
	tx                  *chainTx
	submitted           bool
	firstSent, lastSent time.Time
	answer              pendingAnswer
}

// pendingAnswer is what the latest POST of a chain's pending tx got: at
// the end, why a tx sent was not admitted.
type pendingAnswer int

const (
	// answerRefused: a 503, refused for now (the node is behind or full);
	// it goes again after the Retry-After.
	answerRefused pendingAnswer = iota + 1
	// answerRejected: a 400, a rule the tx broke at that node.
	answerRejected
	// answerNone: no answer; the node may have admitted it, which the next
	// POST or the final check finds out.
	answerNone
)

// admittedTx is one tx of a chain that a node admitted.
type admittedTx struct {
	Hash [32]byte  // tx hash: Blake2b-256 of the whole tx, as GET /api/blocks names it
	Sent time.Time // when the firehose first POSTed it
	// Admitted is when the POST that the node admitted began: after Sent
	// by the time the node's edge refused it (503) before.
	Admitted time.Time
	// Size is its bytes.
	Size int
	// out is its output, worth coin: the next tx of the chain spends it.
	out  ledger.TxIn
	coin uint64
	// tx is the tx itself, kept to send it again should its node drop it,
	// for the chain's last window admitted txs; nil before.
	tx *chainTx
}

// id is the tx id (Blake2b-256 of the body), as the mempool API knows it.
func (t admittedTx) id() [32]byte { return t.out.TxID }

// resubmitWindow is how many of a chain's last admitted txs it keeps, to
// send them again should its node drop them. A node drops what its
// mempool held when it was killed and had not passed on yet: the txs of the
// last moments, far fewer than this.
const resubmitWindow = 2048

// resubmitBytes bounds the bytes of the txs a chain keeps to send again,
// so that a chain of large txs (TxSize) keeps fewer: 2,048 plain payments
// are 0.4 MB, as many txs of 16 kB 32 MB a chain.
const resubmitBytes = 8 << 20

// windowFor is how many admitted txs a chain whose txs are of size on
// average keeps to send again: resubmitWindow, or fewer when they would
// exceed resubmitBytes.
func windowFor(size float64) int {
	return max(1, min(resubmitWindow, int(resubmitBytes/max(1, size))))
}

// errFundsExhausted: a chain's output cannot pay another minimum fee and
// still leave an output of the minimum coin.
var errFundsExhausted = errors.New("funds exhausted")

func newTxChain(name string, node int, key ed25519.PrivateKey, address []byte, start ledger.TxIn, coin uint64) *txChain {
	return &txChain{name: name, node: node, key: key, address: address, head: start, coin: coin, start: start, funds: coin, window: resubmitWindow}
}

// next returns the chain's first pending tx, building it if there is none
// (see fill).
func (c *txChain) next(p ledger.Params) (*chainTx, error) {
	if err := c.fill(p, 1); err != nil {
		return nil, err
	}
	return c.pending[0].tx, nil
}

// fill builds txs ahead until n are pending, each spending the output of
// the one before, padded to the next target size if the chain has
// targets. It fails with errFundsExhausted, having built what it could,
// when the last output cannot pay for another.
func (c *txChain) fill(p ledger.Params, n int) error {
	for len(c.pending) < n {
		in, coin := c.head, c.coin
		if len(c.pending) > 0 {
			last := c.pending[len(c.pending)-1].tx
			in, coin = ledger.TxIn{TxID: last.id, Index: 0}, last.coin
		}
		tx, err := c.build(p, in, coin)
		switch {
		case errors.Is(err, ledger.ErrCannotBalance):
			return fmt.Errorf("%w: %d lovelace left", errFundsExhausted, coin)
		case err != nil:
			return err
		}
		c.pending = append(c.pending, &pendingTx{tx: tx})
	}
	return nil
}

// build builds and signs the tx spending in, worth coin: by the chain's
// template once it has a checked one, else with the ledger's builder,
// from whose plain payments the template is derived. The first tx a
// template makes is built by the ledger too, and the template is kept
// only if the bytes are the same.
func (c *txChain) build(p ledger.Params, in ledger.TxIn, coin uint64) (*chainTx, error) {
	if c.targets != nil {
		tx, err := c.buildPadded(p, in, coin, c.targets.next())
		if err != nil {
			return nil, err
		}
		return fromLedger(tx), nil
	}
	if c.template != nil && in.Index == 0 {
		if tx, ok := c.template.next(in.TxID, coin, c.minCoin, c.key); ok {
			if c.template.checked {
				return tx, nil
			}
			built, err := c.buildPadded(p, in, coin, 0)
			if err != nil {
				return nil, err
			}
			if c.template.checked = bytes.Equal(built.Bytes(), tx.raw); !c.template.checked {
				c.template, c.noTemplate = nil, true
			}
			return fromLedger(built), nil
		}
	}
	built, err := c.buildPadded(p, in, coin, 0)
	if err != nil {
		return nil, err
	}
	if !c.noTemplate {
		if c.minCoin == 0 {
			c.minCoin = ledger.MinOutputCoin(p, c.address)
		}
		if t, ok := newTemplate(built, in); ok {
			c.template = t
		}
	}
	return fromLedger(built), nil
}

// buildPadded builds and signs with the ledger the tx spending in, worth
// coin, padded with a CIP-20 message (see padding) to target bytes: a
// plain payment when that is target or more, else the smallest padded tx
// of target bytes or more. The fee is the minimum for the final size, and
// the size depends on the fee (and on the change it leaves), so the
// padding is adjusted until the size is the target: once, but at the step
// where the change's encoding shrinks.
func (c *txChain) buildPadded(p ledger.Params, in ledger.TxIn, coin uint64, target int) (*ledger.Tx, error) {
	signers := []ed25519.PrivateKey{c.key}
	body, err := ledger.TxBody{Inputs: []ledger.TxIn{in}}.Balance(p, coin, c.address, len(signers))
	if err != nil {
		return nil, err
	}
	size := 0
	if target > 0 {
		if size, err = body.SizeWith(len(signers)); err != nil {
			return nil, err
		}
	}
	if size >= target {
		return body.Build(signers)
	}
	// Padding adds body key 7 (35 bytes) and replaces the null (1 byte).
	auxSize := max(minPadding, target-size-34)
	for range maxPaddingRounds {
		aux, err := padding(auxSize)
		if err != nil {
			return nil, err
		}
		body, err = ledger.TxBody{Inputs: []ledger.TxIn{in}, AuxData: aux}.Balance(p, coin, c.address, len(signers))
		if err != nil {
			return nil, err
		}
		if size, err = body.SizeWith(len(signers)); err != nil {
			return nil, err
		}
		if size == target || (size > target && auxSize == minPadding) {
			return body.Build(signers)
		}
		auxSize = max(minPadding, auxSize+target-size)
	}
	return nil, fmt.Errorf("padding a tx to %d bytes: %d bytes after %d rounds", target, size, maxPaddingRounds)
}

// maxPaddingRounds bounds the rounds of build's padding: two suffice, but
// where the change's encoding shrinks by 4 bytes as the fee grows, a few.
const maxPaddingRounds = 8

// admit records that the node admitted the first pending tx: its output
// is the new head.
func (c *txChain) admit() {
	p := c.pending[0]
	c.pending[0] = nil
	c.pending = c.pending[1:]
	tx := p.tx
	c.record(admittedTx{Hash: tx.hash, Sent: p.firstSent, Admitted: p.lastSent, Size: tx.Size(), out: ledger.TxIn{TxID: tx.id, Index: 0}, coin: tx.coin, tx: tx})
}

// sentPending is how many of the pending txs were sent: those first, as
// the chain sends them in order.
func (c *txChain) sentPending() int {
	n := 0
	for n < len(c.pending) && c.pending[n].submitted {
		n++
	}
	return n
}

// dropPending lets go of the pending txs, which spend an output the chain
// no longer has: those sent count as given up.
func (c *txChain) dropPending() {
	c.givenUp += uint64(c.sentPending())
	c.pending = nil
}

// readmit records that the node admitted the first of the txs to resubmit
// again.
func (c *txChain) readmit() {
	c.record(c.resubmit[0])
	c.resubmit = c.resubmit[1:]
}

// record appends an admitted tx, whose output is the new head, and lets go
// of the tx that falls out of the resubmission window.
func (c *txChain) record(a admittedTx) {
	c.admitted = append(c.admitted, a)
	// A tx admitted again after its node dropped it is in the sample
	// already, at its index: the chain sends the same txs again.
	if i := len(c.admitted) - 1; i == len(c.floorTxs) && i < c.floorCap && a.tx != nil && (c.floorCapBytes == 0 || c.floorBytes+a.tx.Size() <= c.floorCapBytes) {
		c.floorTxs = append(c.floorTxs, a.tx.Bytes())
		c.floorBytes += a.tx.Size()
	}
	if old := len(c.admitted) - 1 - c.window; old >= 0 {
		c.admitted[old].tx = nil
	}
	c.head, c.coin = a.out, a.coin
	c.rejectedInARow = 0
	c.missingSince = time.Time{} // what was missing is back, or sent again
}

// rewind makes the chain go on from its admitted tx i (-1: from its
// start): the txs after it are to be sent again, before those
// already waiting to be. It returns them.
func (c *txChain) rewind(i int) []admittedTx {
	dropped := slices.Clone(c.admitted[i+1:])
	c.admitted = c.admitted[:i+1]
	c.resubmit = append(dropped, c.resubmit...)
	if i < 0 {
		c.head, c.coin = c.start, c.funds
	} else {
		c.head, c.coin = c.admitted[i].out, c.admitted[i].coin
	}
	return dropped
}

// txs are the chain's admitted txs: those its node holds as far as the
// chain knows, then those it dropped and that are still to go again.
func (c *txChain) txs() []admittedTx {
	return append(slices.Clone(c.admitted), c.resubmit...)
}

// lastAdmitted is the newest admitted tx, if any.
func (c *txChain) lastAdmitted() (admittedTx, bool) {
	if len(c.admitted) == 0 {
		return admittedTx{}, false
	}
	return c.admitted[len(c.admitted)-1], true
}
