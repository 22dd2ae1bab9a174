package txsubmission

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Violations found by the client: the server's requests break the window.
var (
	ErrAckTooMany          = protocol.NewViolation("txsubmission: server acknowledged more ids than announced")
	ErrRequestTooMany      = protocol.NewViolation("txsubmission: server asked for more ids than the window holds")
	ErrRequestedNothing    = protocol.NewViolation("txsubmission: server asked for no ids")
	ErrBlockingWithUnacked = protocol.NewViolation("txsubmission: blocking request while ids are unacknowledged")
	ErrNotAnnounced        = protocol.NewViolation("txsubmission: server asked for a tx not announced or asked for twice")
)

// replyBudget bounds the txs of one reply: the state's limit less the
// message's own framing (tag, list header).
const replyBudget = maxTxsMessage - 16

// Client serves the local mempool's txs to the server at the other end of
// its sessions, which pulls them.
type Client struct {
	mempool Mempool
	opts    Options
}

// NewClient returns a client serving mempool.
func NewClient(mempool Mempool, opts Options) *Client {
	return &Client{mempool: mempool, opts: opts.withDefaults()}
}

// Run sends init, then answers the server's requests until ctx ends or the
// session does, or it said done to a blocking request it could not fill
// within KeepAlive (ErrQuiet). A session the server ends cleanly is not an
// error for the caller to count: it returns the session's error
// (protocol.ErrClosed).
func (c *Client) Run(ctx context.Context, s *protocol.Session) error {
	if err := s.Send(&MsgInit{}); err != nil {
		return err
	}
	w := window{Client: c, s: s}
	for {
		msg, err := s.Recv(ctx)
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *MsgRequestTxIds:
			err = w.replyTxIds(ctx, m)
		case *MsgRequestTxs:
			err = w.replyTxs(m)
		default:
			err = fmt.Errorf("txsubmission: client got %T", msg) // the Spec rules it out
		}
		if err != nil {
			return err
		}
	}
}

// window is the client's side of one session: the ids it announced and the
// server has not acknowledged, oldest first, and its cursor into the
// mempool.
type window struct {
	*Client
	s *protocol.Session
	// cursor is the ticket of the last tx announced: the next announcement
	// starts after it, so each tx is announced once per session however
	// the mempool changes around it.
	cursor  uint64
	unacked []announcement
	walk    []MempoolTx // TxsAfter's buffer, reused by every walk
}

type announcement struct {
	id        block.Hash
	requested bool // the server asked for its body already
}

// replyTxIds checks a request against the window, then announces up to Req
// txs after the cursor; a blocking request waits for at least one.
func (w *window) replyTxIds(ctx context.Context, m *MsgRequestTxIds) error {
	ack, req := int(m.Ack), int(m.Req)
	switch {
	case ack > len(w.unacked):
		return w.s.Fail(fmt.Errorf("%w: ack %d of %d", ErrAckTooMany, ack, len(w.unacked)))
	case len(w.unacked)-ack+req > w.opts.MaxUnackedTxIds:
		return w.s.Fail(fmt.Errorf("%w: %d unacknowledged, %d requested, window %d", ErrRequestTooMany, len(w.unacked)-ack, req, w.opts.MaxUnackedTxIds))
	case m.Blocking && len(w.unacked) > ack:
		return w.s.Fail(fmt.Errorf("%w: %d left", ErrBlockingWithUnacked, len(w.unacked)-ack))
	case req == 0 && (m.Blocking || ack == 0):
		return w.s.Fail(ErrRequestedNothing)
	}
	w.unacked = append(w.unacked[:0], w.unacked[ack:]...)

	txs, err := w.next(ctx, req, m.Blocking)
	if err != nil {
		return err
	}
	reply := &MsgReplyTxIds{IDs: make([]TxIDAndSize, len(txs))}
	for i, tx := range txs {
		reply.IDs[i] = TxIDAndSize{ID: tx.Hash, Size: uint32(tx.Size)}
		w.unacked = append(w.unacked, announcement{id: tx.Hash})
	}
	if len(txs) > 0 {
		w.cursor = txs[len(txs)-1].Ticket
	}
	return w.s.Send(reply)
}

// ErrQuiet ends a client that had no new tx for Options.KeepAlive while
// the server held a blocking request: it said done, and the host opens a
// new stream. It is not a failure.
var ErrQuiet = errors.New("txsubmission: no new tx to announce; said done")

// next returns up to req txs after the cursor; if blocking, it waits until
// there is one, or the session or ctx ends, or KeepAlive passes (then it
// says done, if it still can). Once there is one it waits up to
// Options.BatchWait for more, unless req are there already: under load txs
// are admitted one by one, and announcing each in a message of its own
// (and fetching it in one) made the protocol's messages, and the
// encryption and system calls under them, cost more than the txs.
//
// Each walk continues after the last tx the previous one found, never from
// the cursor again: a block taking those txs between two walks must not
// leave a blocking request answered with nothing, and a tx once found is
// announced (if it left the mempool meanwhile, its request is answered
// without it, as the protocol allows).
func (w *window) next(ctx context.Context, req int, blocking bool) ([]MempoolTx, error) {
	var quiet, batched <-chan time.Time
	if blocking {
		t := time.NewTimer(w.opts.KeepAlive)
		defer t.Stop()
		quiet = t.C
	}
	w.walk = w.walk[:0]
	after := w.cursor
	walk := func() {
		w.walk = w.mempool.TxsAfter(w.walk, after, req-len(w.walk))
		if n := len(w.walk); n > 0 {
			after = w.walk[n-1].Ticket
		}
	}
	for {
		// Changed before TxsAfter: a snapshot published in between closes
		// the channel we wait on, so no tx is missed.
		changed := w.mempool.Changed()
		walk()
		switch {
		case !blocking, len(w.walk) == req, len(w.walk) > 0 && w.opts.BatchWait < 0:
			return w.walk, nil
		case len(w.walk) > 0 && batched == nil:
			t := time.NewTimer(w.opts.BatchWait)
			defer t.Stop()
			batched = t.C
		}
		select {
		case <-batched:
			walk()
			return w.walk, nil
		case <-changed:
		case <-w.s.Context().Done():
			return nil, ended(w.s)
		case <-ctx.Done():
			_ = w.s.Send(&MsgDone{})
			return nil, ctx.Err()
		case <-quiet:
			if err := w.s.Send(&MsgDone{}); err != nil {
				return nil, err
			}
			return nil, ErrQuiet
		}
	}
}

// replyTxs sends the requested txs the mempool still holds, in request
// order; those it no longer holds (or that would overflow the reply) are
// left out, as the protocol allows. Every id must be announced and not
// requested before.
func (w *window) replyTxs(m *MsgRequestTxs) error {
	reply := &MsgReplyTxs{Txs: make([][]byte, 0, len(m.IDs))}
	budget := replyBudget
	for _, id := range m.IDs {
		a := w.find(id)
		if a == nil {
			return w.s.Fail(fmt.Errorf("%w: %s", ErrNotAnnounced, id.Short()))
		}
		a.requested = true
		tx, ok := w.mempool.Lookup(id)
		if !ok {
			continue
		}
		// A byte string header is at most 5 bytes for any tx under 4 GB.
		if cost := len(tx) + 5; cost <= budget {
			reply.Txs = append(reply.Txs, tx)
			budget -= cost
		}
	}
	return w.s.Send(reply)
}

// find returns the oldest announcement of id not requested yet. The window
// is at most MaxUnackedLimit long and a request shorter: a scan is cheap.
func (w *window) find(id block.Hash) *announcement {
	for i := range w.unacked {
		if a := &w.unacked[i]; a.id == id && !a.requested {
			return a
		}
	}
	return nil
}

// ended is why a session whose context is done ended. Its error is set
// just after the context of a session closed by its parent ends, so it may
// still be nil.
func ended(s *protocol.Session) error {
	if err := s.Err(); err != nil {
		return err
	}
	return protocol.ClosedBy(context.Cause(s.Context()))
}
