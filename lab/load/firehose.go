package load

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/ledger"
)

// FundedFor is how many funded keys — chains of txs, the firehose's
// parallelism — it needs to offer rate tx/s: one per 100 tx/s, at
// least 10. A chain sends one batch at a time, and a chain the node
// refused waits out its Retry-After, so past capacity the others must
// keep offering.
func FundedFor(rate float64) int { return max(10, int(math.Ceil(rate/100))) }

// Options configure a firehose.
type Options struct {
	// Rate is the txs per second offered over all chains; it must be
	// positive.
	Rate float64
	// MaxRejectionsInARow stops a chain whose txs its node rejected this
	// many times without an admission in between: the rejection is not
	// going away. Default 5.
	MaxRejectionsInARow int
	// UpPoll is how often a submitter asks its node's GET /status until
	// the node answers, before the first submission. Default 250 ms.
	UpPoll time.Duration
	// DropConfirm is how long admitted txs must stay in no mempool and on
	// no chain before the firehose takes them as dropped and sends them
	// again: a node that rolled back a block puts its txs back into its
	// mempool once it has synced to the new chain, and they are nowhere
	// meanwhile. Default 2 s.
	DropConfirm time.Duration
	// TxSize is the distribution of the txs' sizes: each is padded with
	// metadata to a size drawn from it, per chain from a seed of its own
	// (see TxSize). Default: plain payments of some 191 B.
	TxSize TxSize
	// BatchWindow is how often a chain sends the txs that came due, in one
	// POST /api/submit/txs: a chain offering r tx/s sends r·BatchWindow of
	// them a POST (at least one), each built ahead on the one before it.
	// Default 100 ms: a tx waits at most that long to go, and the POSTs,
	// not the txs, pay for the HTTP round trips.
	BatchWindow time.Duration
	// MaxBatchTxs bounds the txs of a POST. Default 64; never above what a
	// node with the API's default bounds takes (apiclient.MaxBatchTxs), nor
	// more bytes than it takes (apiclient.MaxBatchBytes).
	MaxBatchTxs int
}

func (o Options) withDefaults() Options {
	if o.MaxRejectionsInARow <= 0 {
		o.MaxRejectionsInARow = 5
	}
	if o.UpPoll <= 0 {
		o.UpPoll = 250 * time.Millisecond
	}
	if o.DropConfirm <= 0 {
		o.DropConfirm = 2 * time.Second
	}
	if o.BatchWindow <= 0 {
		o.BatchWindow = 100 * time.Millisecond
	}
	if o.MaxBatchTxs <= 0 {
		o.MaxBatchTxs = 64
	}
	o.MaxBatchTxs = min(o.MaxBatchTxs, apiclient.MaxBatchTxs)
	return o
}

// Firehose feeds a network valid signed txs from funded keys: one chain
// of txs per key (see txChain), chain j submitted only to node j mod N, so
// a tx never reaches a node before its parent. Each node has its own
// submitter goroutine for its chains: every interval each chain sends its
// share of the rate, its pending txs and new ones built ahead on them,
// each spending the one before; one POST /api/submit/txs carries the
// batches of all the node's chains, which the node adds in order. The
// answers are judged per chain, in order, up to the first tx the node did
// not admit: a tx refused for now (503: it is behind, or full) goes
// again, with those after it, after the answer's Retry-After, as a
// wallet's would; a rejected tx makes the chain resynchronise with its
// node (see resync); a POST without an answer makes the node's chains
// wait until it answers again.
//
// Like a wallet, the firehose holds on to its admitted txs until they have
// reached a chain: a 202 means a node's mempool took the tx, and a node
// killed before it passed the tx on loses it. A chain whose txs its node
// dropped sends them again, the same txs (see recoverDropped), and the
// report counts them as dropped by the node; a tx is lost only if it is on
// no chain and in no mempool at the end.
type Firehose struct {
	opts   Options
	params ledger.Params
	nodes  []Node
	apis   []apiclient.Client // by node index
	chains []*txChain
	// batch is how many txs a chain sends every interval: its share of
	// the rate. postTxs bounds the txs of a POST, of all its node's chains.
	batch    int
	interval time.Duration
	postTxs  int

	// mu guards stats, which submitters update and the status line reads;
	// it is held only to update or copy them.
	mu    sync.Mutex
	stats txStats
}

// txStats count the submissions' outcomes.
type txStats struct {
	Submitted uint64 // distinct txs sent
	Admitted  uint64 // 202 answers (and txs found in after an unanswered POST)
	// SubmittedBytes and AdmittedBytes are the sizes of those txs.
	SubmittedBytes, AdmittedBytes uint64
	Rejected                      map[string]uint64 // 400 answers acted on, by reason: a batch's first tx not admitted
	Refused                       map[string]uint64 // 503 answers by reason, one a tx; the tx went again after its Retry-After
	SubmitErrors                  uint64            // POSTs and resync queries without an answer
	// Dropped counts the admitted txs found later in no mempool and on no
	// chain (their node dropped them), by the node that admitted them;
	// Resubmitted those admitted again when sent again.
	Dropped     map[string]uint64
	Resubmitted uint64
	// Drops are the drops, as they were found.
	Drops []Drop

	// The firehose's own speed: the time spent building and signing the
	// txs, the POSTs made, the txs they carried and their round trips, and
	// when the first and the last distinct tx went.
	Built               uint64
	BuildTime           time.Duration
	Posts, PostedTxs    uint64
	PostTime            time.Duration
	FirstSent, LastSent time.Time
}

// Node is a node the firehose submits to: a name for its lines and
// reports, and the base URL of its HTTP API, e.g. http://127.0.0.1:3002.
type Node struct {
	Name, URL string
}

// New is the firehose of keys over nodes: chain j spends key j's largest
// output, pinned to node j mod len(nodes). It reads the protocol
// parameters from every node (GET /api/parameters: a node that does not
// answer, or applies others than the first, is an error naming it) and
// each key's outputs from its chain's node (GET /api/addresses/…/utxos: a
// key whose address holds none is an error naming the key), so it works
// on any network at any height, with no genesis file.
func New(ctx context.Context, nodes []Node, keys []Key, client *http.Client, opts Options) (*Firehose, error) {
	switch {
	case opts.Rate <= 0:
		return nil, fmt.Errorf("the rate must be positive, not %g", opts.Rate)
	case len(nodes) == 0:
		return nil, errors.New("no nodes to submit to")
	case len(keys) == 0:
		return nil, errors.New("no funded keys to spend")
	case opts.TxSize.Padded() && (opts.TxSize.Min < 1 || opts.TxSize.Min > opts.TxSize.Max):
		return nil, fmt.Errorf("tx size %d-%d: %w", opts.TxSize.Min, opts.TxSize.Max, ErrTxSizeSyntax)
	}
	var params ledger.Params
	for i, n := range nodes {
		p, err := apiclient.Parameters(ctx, client, n.URL)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s (%s) does not answer: %w", n.Name, n.URL, err)
		case i > 0 && p != params:
			return nil, fmt.Errorf("%s applies other protocol parameters than %s: not one network", n.Name, nodes[0].Name)
		}
		params = p
	}
	if uint64(opts.TxSize.Max) > params.MaxTxSize {
		return nil, fmt.Errorf("tx size %s: the network's max tx size is %d bytes", opts.TxSize, params.MaxTxSize)
	}
	var chains []*txChain
	for j, k := range keys {
		node := nodes[j%len(nodes)]
		address := ledger.EnterpriseAddress(params.NetworkID, ledger.KeyHash(k.Key.Public().(ed25519.PublicKey)))
		start, coin, err := largestOutput(ctx, client, node.URL, address)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.Name, err)
		}
		chains = append(chains, newTxChain(k.Name, j%len(nodes), k.Key, address, start, coin))
	}
	return newFirehose(params, nodes, chains, client, opts), nil
}

// largestOutput is the largest output address holds at the node at url:
// the one its chain starts from.
func largestOutput(ctx context.Context, client *http.Client, url string, address []byte) (ledger.TxIn, uint64, error) {
	outputs, err := apiclient.AddressUTxOs(ctx, client, url, address)
	if err != nil {
		return ledger.TxIn{}, 0, fmt.Errorf("its outputs at %s: %w", url, err)
	}
	var start ledger.TxIn
	var most uint64
	for _, u := range outputs {
		coin, err := u.Lovelace()
		if err != nil {
			return ledger.TxIn{}, 0, fmt.Errorf("%s's answer: %w", url, err)
		}
		if coin > most {
			if start, err = apiclient.SpendingInput(u); err != nil {
				return ledger.TxIn{}, 0, fmt.Errorf("%s's answer: %w", url, err)
			}
			most = coin
		}
	}
	if most == 0 {
		return ledger.TxIn{}, 0, fmt.Errorf("its address %s holds no output at %s: fund it first", ledger.FormatAddress(address), url)
	}
	return start, most, nil
}

func newFirehose(params ledger.Params, nodes []Node, chains []*txChain, client *http.Client, opts Options) *Firehose {
	for _, c := range chains {
		c.floorCap = (floorSampleTxs + len(chains) - 1) / len(chains)
		c.floorCapBytes = (floorSampleBytes + len(chains) - 1) / len(chains)
		if opts.TxSize.Padded() {
			c.targets = newTxTargets(opts.TxSize, c.name)
			c.window = windowFor(opts.TxSize.Mean())
		}
	}
	apis := make([]apiclient.Client, len(nodes))
	for i, n := range nodes {
		apis[i] = apiclient.New(client, n.URL)
	}
	opts = opts.withDefaults()
	// Each chain's share of the rate, as a batch every interval.
	perChain := opts.Rate / float64(max(1, len(chains)))
	batch := min(opts.MaxBatchTxs, max(1, int(math.Round(perChain*opts.BatchWindow.Seconds()))))
	interval := time.Duration(float64(time.Second) * float64(batch) / perChain)
	return &Firehose{opts: opts, params: params, nodes: nodes, apis: apis, chains: chains, batch: batch, interval: interval, postTxs: apiclient.MaxBatchTxs,
		stats: txStats{Rejected: map[string]uint64{}, Refused: map[string]uint64{}, Dropped: map[string]uint64{}}}
}

// Run submits txs until ctx ends or every chain has stopped.
func (f *Firehose) Run(ctx context.Context) {
	byNode := make([][]*txChain, len(f.nodes))
	for _, c := range f.chains {
		byNode[c.node] = append(byNode[c.node], c)
	}
	// The nodes' submitters start spread over one interval, so that their
	// POSTs do not come at once.
	var submitters errgroup.Group
	for n, chains := range byNode {
		if len(chains) == 0 {
			continue
		}
		offset := f.interval * time.Duration(n) / time.Duration(len(f.nodes))
		submitters.Go(func() error {
			f.submitNode(ctx, n, chains, offset)
			return nil
		})
	}
	_ = submitters.Wait() // submitters return no error
}

// submitNode is node n's submitter, for its chains: once the node answers
// and offset has passed, one step per interval until ctx ends or every
// chain has stopped. One POST carries the batches of all its chains: the
// POSTs, their round trips and the goroutines they wake are what a tx
// costs the firehose beyond its signature, so they are as few as the
// node's bounds allow.
func (f *Firehose) submitNode(ctx context.Context, n int, chains []*txChain, offset time.Duration) {
	if !f.awaitUp(ctx, n) {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(offset):
	}
	paced(ctx, f.interval, maxLag, func() bool {
		// A step runs to its end even when stopping (each of its requests
		// is bounded), so that what the node admitted is recorded exactly.
		f.step(context.WithoutCancel(ctx), f.apis[n], chains)
		if slices.ContainsFunc(chains, func(c *txChain) bool { return c.nodeDown }) {
			// The node did not answer: it may be down. Its next POST waits
			// until it answers again, as a wallet would.
			if !f.awaitUp(ctx, n) {
				return false
			}
			for _, c := range chains {
				c.nodeDown = false
			}
		}
		return slices.ContainsFunc(chains, func(c *txChain) bool { return c.stopped == "" })
	})
}

// awaitUp waits until node n answers GET /status, or ctx ends.
func (f *Firehose) awaitUp(ctx context.Context, n int) bool {
	for {
		if _, err := f.apis[n].Status(ctx); err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(f.opts.UpPoll):
		}
	}
}

// maxLag is how far a chain's submitter may fall behind its schedule and
// still make up for it: a node that stalls for a moment (a big block to
// apply) gets the txs it was due right after; one slow for longer gets
// fewer.
const maxLag = time.Second

// paced calls step once per interval until ctx ends or step returns false.
// A step due while the one before ran is made at once after it, unless it
// is more than lag late: when a step is slow, the steps follow one another
// without a pause until they are back on schedule or lag behind it, never
// two at once.
func paced(ctx context.Context, interval, lag time.Duration, step func() bool) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	due := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		// A late step's timer has fired by the time the context ends, and
		// select picks either: the context wins.
		if ctx.Err() != nil || !step() {
			return
		}
		now := time.Now()
		due = due.Add(interval)
		if late := now.Add(-lag); due.Before(late) {
			due = late
		}
		timer.Reset(due.Sub(now))
	}
}

// nodeBehindPause is how long a chain waits before its next POST when its
// node rejected a tx whose parent another node holds: the node is behind
// (it restarted, or is on the short side of a partition) and catching up.
const nodeBehindPause = time.Second

// step sends chains' batches to their node, in as few POSTs as the node's
// bounds allow, and acts on the answers (see conclude). A chain sends
// again the txs its node dropped, else its pending txs and new ones built
// ahead on them, up to its batch; one that waits out a Retry-After, or has
// stopped, sends nothing. Once a POST gets no answer or is refused whole,
// the chains after it wait for the next step.
func (f *Firehose) step(ctx context.Context, api apiclient.Client, chains []*txChain) {
	var sends []*send
	for _, c := range chains {
		if s := f.prepare(c); s != nil {
			sends = append(sends, s)
		}
	}
	for len(sends) > 0 {
		n, txs, bytes := 0, 0, 0
		for n < len(sends) && (n == 0 || txs+len(sends[n].raws) <= f.postTxs && bytes+sends[n].bytes <= maxBatchBytes) {
			txs, bytes = txs+len(sends[n].raws), bytes+sends[n].bytes
			n++
		}
		if !f.post(ctx, api, sends[:n]) {
			return
		}
		sends = sends[n:]
	}
}

// send is a chain's part of a POST: its batch of pending txs, or of
// admitted txs its node dropped, sent again.
type send struct {
	c      *txChain
	batch  []*pendingTx // a copy: admitting a tx takes it off the chain's pending
	resend []admittedTx // or these, sent again
	raws   [][]byte
	bytes  int
}

// prepare is c's part of the next POST, or nil when it sends nothing: it
// waits out a Retry-After, or has stopped, or its funds ran out with no
// tx pending (then it stops).
func (f *Firehose) prepare(c *txChain) *send {
	if c.stopped != "" || time.Now().Before(c.retryAt) {
		return nil
	}
	s := &send{c: c}
	if len(c.resubmit) > 0 {
		s.resend = c.resubmit[:batchLen(c.resubmit, f.batch, func(a admittedTx) int { return a.Size })]
		for _, a := range s.resend {
			s.raws, s.bytes = append(s.raws, a.tx.Bytes()), s.bytes+a.Size
		}
		return s
	}
	building := time.Now()
	before := len(c.pending)
	// Funds that run out leave the txs built so far to send: the chain
	// stops once none is left.
	if err := c.fill(f.params, f.batch); err != nil && len(c.pending) == 0 {
		c.stopped = err.Error()
		return nil
	}
	if built := uint64(len(c.pending) - before); built > 0 {
		took := time.Since(building)
		f.count(func(s *txStats) { s.Built += built; s.BuildTime += took })
	}
	s.batch = slices.Clone(c.pending[:batchLen(c.pending, f.batch, func(p *pendingTx) int { return p.tx.Size() })])
	for _, p := range s.batch {
		s.raws, s.bytes = append(s.raws, p.tx.Bytes()), s.bytes+p.tx.Size()
	}
	return s
}

// post sends the chains' parts in one POST and acts on the answers, and
// says whether the node answered them.
func (f *Firehose) post(ctx context.Context, api apiclient.Client, sends []*send) bool {
	posting := time.Now()
	var raws [][]byte
	var fresh, freshBytes uint64
	for _, s := range sends {
		raws = append(raws, s.raws...)
		for _, p := range s.batch {
			if !p.submitted {
				p.submitted, p.firstSent = true, posting
				fresh, freshBytes = fresh+1, freshBytes+uint64(p.tx.Size())
			}
			p.lastSent = posting
		}
	}
	f.count(func(s *txStats) {
		s.Submitted, s.SubmittedBytes = s.Submitted+fresh, s.SubmittedBytes+freshBytes
		if fresh > 0 {
			if s.FirstSent.IsZero() {
				s.FirstSent = posting
			}
			s.LastSent = posting
		}
	})
	results, err := api.SubmitBatch(ctx, raws)
	f.count(func(s *txStats) {
		s.Posts++
		s.PostedTxs += uint64(len(raws))
		s.PostTime += time.Since(posting)
		if err != nil && !errors.As(err, new(*apiclient.RefusedError)) {
			s.SubmitErrors++
		}
	})
	for _, s := range sends {
		var answers []apiclient.TxResult
		if err == nil {
			answers, results = results[:len(s.raws)], results[len(s.raws):]
		}
		if s.resend != nil {
			f.concludeResend(ctx, api, s.c, len(s.resend), answers, err)
		} else {
			f.conclude(ctx, api, s.c, s.batch, answers, err)
		}
	}
	return err == nil
}

// conclude acts on the node's answers to c's batch, or on err, the POST's
// refusal or lack of an answer: the txs admitted move to the chain's
// admitted, in order, up to the first that was not (see notAdmitted).
func (f *Firehose) conclude(ctx context.Context, api apiclient.Client, c *txChain, batch []*pendingTx, answers []apiclient.TxResult, err error) {
	var refusal *apiclient.RefusedError
	switch {
	case errors.As(err, &refusal):
		// The node's edge refused the batch whole. As a wallet does: come
		// back when the node said to.
		for _, p := range batch {
			p.answer = answerRefused
		}
		c.retryAt = time.Now().Add(refusal.RetryAfter)
		f.count(func(s *txStats) { s.Refused[refusal.Reason] += uint64(len(batch)) })
		return
	case err != nil:
		// No answer: the node may have admitted them. The next submission
		// of the same txs, or the final check, finds out.
		for _, p := range batch {
			p.answer = answerNone
		}
		c.nodeDown = true
		return
	}
	for i, r := range answers {
		if admitted(r) {
			size := batch[i].tx.Size()
			c.admit()
			f.count(func(s *txStats) { s.Admitted++; s.AdmittedBytes += uint64(size) })
			continue
		}
		f.notAdmitted(ctx, api, c, batch[i:], answers[i:])
		return
	}
}

// admitted says a tx's answer admits it: a 202, or a 400 because the node
// holds it already — a POST of it whose answer was lost got it in.
func admitted(r apiclient.TxResult) bool {
	var rejection *apiclient.RejectedError
	return r.Err == nil || errors.As(r.Err, &rejection) && rejection.Held()
}

// notAdmitted acts on the answer to batch[0], the first tx of a batch the
// node did not admit, as to a single tx's: a refusal holds the chain back
// for its Retry-After, a rejection resynchronises it with its node, no
// answer waits for the node. The txs after it spend its output, or a
// later one's: each keeps its own answer for the final count, and its 503
// counts among the refusals, but only the first's 400 among the
// rejections, the others following from it.
func (f *Firehose) notAdmitted(ctx context.Context, api apiclient.Client, c *txChain, batch []*pendingTx, answers []apiclient.TxResult) {
	var refusal *apiclient.RefusedError
	var rejection *apiclient.RejectedError
	for i, r := range answers {
		switch {
		case errors.As(r.Err, &refusal):
			batch[i].answer = answerRefused
			f.count(func(s *txStats) { s.Refused[refusal.Reason]++ })
		case errors.As(r.Err, &rejection) && !rejection.Held():
			batch[i].answer = answerRejected
		default:
			// Admitted after a tx that was not, or no answer for it: the
			// node may hold it; the next POST or the final check finds out.
			batch[i].answer = answerNone
		}
	}
	switch err := answers[0].Err; {
	case errors.As(err, &refusal):
		// As a wallet does: come back when the node said to.
		c.retryAt = time.Now().Add(refusal.RetryAfter)
	case errors.As(err, &rejection):
		f.count(func(s *txStats) { s.Rejected[rejection.RuleName()]++ })
		f.resync(ctx, api, c, rejection.Reason)
	default:
		f.count(func(s *txStats) { s.SubmitErrors++ })
		c.nodeDown = true
	}
}

// concludeResend acts on the node's answers to the first sent of the txs
// c sends again, or on err, as conclude does. A tx counts once in Submitted and Admitted,
// however often it was sent.
func (f *Firehose) concludeResend(ctx context.Context, api apiclient.Client, c *txChain, sent int, answers []apiclient.TxResult, err error) {
	var refusal *apiclient.RefusedError
	switch {
	case errors.As(err, &refusal):
		c.retryAt = time.Now().Add(refusal.RetryAfter)
		f.count(func(s *txStats) { s.Refused[refusal.Reason] += uint64(sent) })
		return
	case err != nil:
		c.nodeDown = true
		return
	}
	for i, r := range answers {
		if admitted(r) {
			c.readmit()
			f.count(func(s *txStats) { s.Resubmitted++ })
			continue
		}
		var rejection *apiclient.RejectedError
		switch {
		case errors.As(r.Err, &refusal):
			// As a wallet does: come back when the node said to. The txs
			// after it were refused with it.
			c.retryAt = time.Now().Add(refusal.RetryAfter)
			f.count(func(s *txStats) { s.Refused[refusal.Reason] += uint64(len(answers) - i) })
		case errors.As(r.Err, &rejection):
			// Its parent is not at the node: the node is behind, or dropped
			// more since. Look again.
			f.count(func(s *txStats) { s.Rejected[rejection.RuleName()]++ })
			c.rejectedInARow++
			f.recoverDropped(ctx, c)
			f.stopIfStuck(c, rejection.Reason)
		default:
			f.count(func(s *txStats) { s.SubmitErrors++ })
			c.nodeDown = true
		}
		return
	}
}

// batchLen is how many of the first of txs go in one POST: at most most,
// and no more bytes than a node takes in a batch; at least one.
func batchLen[T any](txs []T, most int, size func(T) int) int {
	n, bytes := 0, 0
	for n < min(most, len(txs)) && (n == 0 || bytes+size(txs[n]) <= maxBatchBytes) {
		bytes += size(txs[n])
		n++
	}
	return n
}

// maxBatchBytes bounds the txs of a POST: what a node with the API's
// default bounds takes, less the array's head.
const maxBatchBytes = apiclient.MaxBatchBytes - 9

// recoverDropped finds out whether c's node dropped some of the txs it
// admitted, as a node killed with them in its mempool does, and if so
// makes the chain send them again. It asks every node, newest tx first,
// whether the tx is in its mempool or its output unspent at its tip: the
// newest one some node holds survived, and so did everything before it
// (its parent was there when it was admitted; a tx leaves a mempool only
// for the chain). The txs after it are nowhere. If they still are
// DropConfirm later (a node that rolled back their block takes them back
// into its mempool meanwhile), they were dropped: they go again, the same
// txs, before any new one. When nothing is missing, the node that rejected
// the tx is behind the others, and the chain gives it time.
//
// A node that does not answer may hold the txs, so then nothing is
// decided, and the chain asks again later.
func (f *Firehose) recoverDropped(ctx context.Context, c *txChain) {
	survivor := -1
	for i := len(c.admitted) - 1; i >= 0; i-- {
		held, err := f.heldAnywhere(ctx, c.admitted[i])
		if err != nil {
			f.count(func(s *txStats) { s.SubmitErrors++ })
			c.retryAt = time.Now().Add(nodeBehindPause)
			return
		}
		if held {
			survivor = i
			break
		}
	}
	if survivor == len(c.admitted)-1 {
		c.missingSince = time.Time{}
		c.rejectedInARow = 0 // explained: the node is catching up
		c.retryAt = time.Now().Add(nodeBehindPause)
		return
	}
	if c.missingSince.IsZero() || time.Since(c.missingSince) < f.opts.DropConfirm {
		if c.missingSince.IsZero() {
			c.missingSince = time.Now()
		}
		c.rejectedInARow = 0 // explained: the txs are missing for now
		c.retryAt = c.missingSince.Add(f.opts.DropConfirm)
		return
	}
	c.missingSince = time.Time{}
	if first := c.admitted[survivor+1]; first.tx == nil {
		c.stopped = fmt.Sprintf("%s dropped %d of its txs, more than the last %d it keeps to send again",
			f.nodeName(c.node), len(c.admitted)-1-survivor, c.window)
		return
	}
	dropped := c.rewind(survivor)
	c.rejectedInARow = 0 // explained: the node dropped its parent
	f.count(func(s *txStats) {
		s.Dropped[f.nodeName(c.node)] += uint64(len(dropped))
		s.Drops = append(s.Drops, Drop{At: time.Now(), Node: f.nodeName(c.node), Txs: uint64(len(dropped))})
	})
}

// Drop is one finding of txs a node dropped: when, which node, how many.
type Drop struct {
	At   time.Time
	Node string
	Txs  uint64
}

// Drops are the drops found so far.
func (f *Firehose) Drops() []Drop {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.stats.Drops)
}

// heldAnywhere says whether some node holds tx: in its mempool, or on its
// chain with its output unspent.
func (f *Firehose) heldAnywhere(ctx context.Context, tx admittedTx) (bool, error) {
	for _, a := range f.apis {
		in, err := a.InMempool(ctx, tx.id())
		if err != nil {
			return false, err
		}
		if in {
			return true, nil
		}
	}
	for _, a := range f.apis {
		_, unspent, err := a.UTxO(ctx, tx.out)
		if err != nil {
			return false, err
		}
		if unspent {
			return true, nil
		}
	}
	return false, nil
}

// Sweep is the firehose's last look at its txs once it has stopped, as a
// wallet's: every chain whose node dropped some of its txs sends them
// again now, so that the final check finds each where it went. A chain
// gives up after a few answers that admit nothing.
func (f *Firehose) Sweep(ctx context.Context) {
	var chains errgroup.Group
	for _, c := range f.chains {
		chains.Go(func() error {
			api := f.apis[c.node]
			if _, err := f.resolvePending(ctx, api, c); err != nil {
				return nil
			}
			c.retryAt, c.missingSince = time.Time{}, time.Time{}
			f.recoverDropped(ctx, c)
			if !c.missingSince.IsZero() { // some are missing: confirm
				time.Sleep(time.Until(c.missingSince.Add(f.opts.DropConfirm)))
				f.recoverDropped(ctx, c)
			}
			for tries := 0; len(c.resubmit) > 0 && tries < 5; tries++ {
				before := len(c.resubmit)
				c.retryAt, c.nodeDown = time.Time{}, false
				f.step(ctx, api, []*txChain{c})
				if len(c.resubmit) < before {
					tries = 0
				} else {
					time.Sleep(nodeBehindPause)
				}
			}
			return nil
		})
	}
	_ = chains.Wait() // the chains return no error
}

// resync finds out where chain c stands at its node after the node
// rejected its pending tx, and lets it go on or stops it:
//   - the pending tx is in after all (an earlier POST that got no answer
//     was admitted): it counts as admitted;
//   - the output the pending tx spends is still coming (its tx is in the
//     mempool) or unspent at the tip: the chain goes on from it, and stops
//     only if the rejections keep coming;
//   - else that output is gone at the node: the chain looks for the txs
//     the node dropped and sends them again (see recoverDropped).
//
// A query without an answer leaves the chain as it is, to try again.
func (f *Firehose) resync(ctx context.Context, api apiclient.Client, c *txChain, reason string) {
	c.rejectedInARow++
	if in, err := f.resolvePending(ctx, api, c); err != nil {
		f.count(func(s *txStats) { s.SubmitErrors++ })
		return
	} else if in {
		return
	}
	if last, ok := c.lastAdmitted(); ok {
		pending, err := api.InMempool(ctx, last.id())
		if err != nil {
			f.count(func(s *txStats) { s.SubmitErrors++ })
			return
		}
		if pending {
			f.stopIfStuck(c, reason)
			return
		}
	}
	out, unspent, err := api.UTxO(ctx, c.head)
	switch {
	case err != nil:
		f.count(func(s *txStats) { s.SubmitErrors++ })
	case !unspent:
		// Its node no longer holds the last admitted tx: either it dropped
		// it (it was killed with it in its mempool) or it is behind.
		f.recoverDropped(ctx, c)
	default:
		if out.Coin != c.coin { // cannot happen: an output never changes
			// The pending txs are built anew: those sent stay counted.
			c.coin = out.Coin
			c.dropPending()
		}
		f.stopIfStuck(c, reason)
	}
}

// resolvePending checks whether c's pending txs sent are in at its node
// after all: in its mempool or, by their outputs, on its chain. It asks
// from the newest back: the newest in has its output unspent, as the next
// is not in, and every tx before it is in too (a tx is admitted only on
// its parent), where an older one's output may be spent already. It
// admits those in and says whether there were any.
func (f *Firehose) resolvePending(ctx context.Context, api apiclient.Client, c *txChain) (bool, error) {
	for i := c.sentPending() - 1; i >= 0; i-- {
		id := c.pending[i].tx.id
		in, err := api.InMempool(ctx, id)
		if err == nil && !in {
			_, in, err = api.UTxO(ctx, ledger.TxIn{TxID: id, Index: 0})
		}
		if err != nil {
			return false, err
		}
		if !in {
			continue
		}
		var size uint64
		for _, p := range c.pending[:i+1] {
			size += uint64(p.tx.Size())
		}
		for range i + 1 {
			c.admit()
		}
		f.count(func(s *txStats) { s.Admitted += uint64(i + 1); s.AdmittedBytes += size })
		return true, nil
	}
	return false, nil
}

func (f *Firehose) stopIfStuck(c *txChain, reason string) {
	if c.rejectedInARow >= f.opts.MaxRejectionsInARow {
		c.stopped = fmt.Sprintf("rejected %d times in a row: %s", c.rejectedInARow, reason)
	}
}

func (f *Firehose) nodeName(n int) string { return f.nodes[n].Name }

// count updates the stats under the lock.
func (f *Firehose) count(update func(*txStats)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	update(&f.stats)
}

// floorSampleTxs is the most txs FloorSample keeps, and floorSampleBytes
// the most bytes: 20,000 plain payments are 4 MB, as many large txs
// (TxSize) would be 70 MB held for the whole run.
const (
	floorSampleTxs   = 20_000
	floorSampleBytes = 8 << 20
)

// FloorSample is the txs a CPU floor is measured on: each chain's first
// admitted txs, chain after chain, at most floorSampleTxs and about
// floorSampleBytes in all. Each
// chain's txs apply in order from the output it started from (on a fresh
// devnet, the genesis funds), and the chains never touch one another's
// outputs. Call it once the firehose has stopped.
func (f *Firehose) FloorSample() [][]byte {
	var txs [][]byte
	for _, c := range f.chains {
		txs = append(txs, c.floorTxs...)
	}
	return txs[:min(len(txs), floorSampleTxs)]
}

// Counts are a firehose's running counts: POSTs made (each a batch of
// txs), distinct txs sent, admitted, and 503 answers by reason, one a tx;
// the bytes of the txs sent and admitted.
type Counts struct {
	Posts, Submitted, Admitted    uint64
	Refused                       map[string]uint64
	SubmittedBytes, AdmittedBytes uint64
}

// Counts are the firehose's running counts so far.
func (f *Firehose) Counts() Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	return Counts{Posts: s.Posts, Submitted: s.Submitted, Admitted: s.Admitted, Refused: maps.Clone(s.Refused),
		SubmittedBytes: s.SubmittedBytes, AdmittedBytes: s.AdmittedBytes}
}

// Submitted is the number of distinct txs sent so far.
func (f *Firehose) Submitted() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats.Submitted
}
