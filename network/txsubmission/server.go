package txsubmission

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Violations found by the server: the client's replies are not what was
// asked for.
var (
	ErrTooManyTxIds       = protocol.NewViolation("txsubmission: client announced more ids than requested")
	ErrEmptyBlockingReply = protocol.NewViolation("txsubmission: client answered a blocking request with no ids")
	ErrUnexpectedDone     = protocol.NewViolation("txsubmission: client said done to a non-blocking request")
	ErrBadTxSize          = protocol.NewViolation("txsubmission: client announced a tx size out of bounds")
	ErrUnrequestedTx      = protocol.NewViolation("txsubmission: client sent a tx not requested, or out of order")
	ErrSizeMismatch       = protocol.NewViolation("txsubmission: tx size differs from the announced one")
	ErrTooManyInvalidTxs  = protocol.NewDisconnectViolation("txsubmission: client sent too many invalid txs")
)

// Server pulls txs from the client at the other end of its sessions into
// the local mempool.
type Server struct {
	mempool Mempool
	opts    Options
}

// NewServer returns a server adding to mempool.
func NewServer(mempool Mempool, opts Options) *Server {
	return &Server{mempool: mempool, opts: opts.withDefaults()}
}

// Serve pulls from one client until it says done (nil), ctx ends, or the
// session does. ctx must end with the session: it bounds the waits for
// mempool room.
func (srv *Server) Serve(ctx context.Context, s *protocol.Session) error {
	msg, err := s.Recv(ctx)
	if err != nil {
		return err
	}
	if _, ok := msg.(*MsgInit); !ok {
		return fmt.Errorf("txsubmission: server got %T before init", msg) // the Spec rules it out
	}
	p := &pull{Server: srv, s: s}
	for {
		ack := p.ackable()
		outstanding := len(p.unacked) - ack
		switch {
		case outstanding == 0:
			// Nothing left to fetch: wait for the client's next tx.
			err = p.requestTxIds(ctx, true, ack, p.opts.MaxUnackedTxIds)
		case !p.askedIds && outstanding < p.opts.MaxUnackedTxIds && p.toFetch() < p.opts.MaxTxsPerRequest:
			// Running low while the window has room: top it up, and
			// acknowledge what is done, without waiting.
			err = p.requestTxIds(ctx, false, ack, p.opts.MaxUnackedTxIds-outstanding)
		default:
			err = p.requestTxs(ctx)
		}
		if errors.Is(err, errDone) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// errDone ends a pull whose client said done.
var errDone = errors.New("txsubmission: client done")

// pull is the server's side of one session.
type pull struct {
	*Server
	s *protocol.Session
	// unacked are the ids the client announced and the server has not
	// acknowledged, oldest first; at most MaxUnackedTxIds.
	unacked []pending
	// askedIds: the last request was for ids, so the next one fetches the
	// txs they announced before asking for more.
	askedIds bool
	// invalid holds when each recent invalid tx arrived, oldest first.
	invalid []time.Time
}

type pending struct {
	id   block.Hash
	size uint32
	done bool // fetched, or not to be fetched: it may be acknowledged
}

// ackable is how many of the oldest ids are done: acknowledgements release
// ids in announcement order only.
func (p *pull) ackable() int {
	n := 0
	for n < len(p.unacked) && p.unacked[n].done {
		n++
	}
	return n
}

// toFetch is how many announced txs are still to be fetched.
func (p *pull) toFetch() int {
	n := 0
	for _, e := range p.unacked {
		if !e.done {
			n++
		}
	}
	return n
}

// known reports whether a tx needs no fetching: held, or rejected lately.
func (p *pull) known(id block.Hash) bool {
	return p.mempool.Has(id) || p.mempool.RecentlyRejected(id)
}

// requestTxIds acknowledges ack ids and asks for up to req new ones.
func (p *pull) requestTxIds(ctx context.Context, blocking bool, ack, req int) error {
	if err := p.s.Send(&MsgRequestTxIds{Blocking: blocking, Ack: uint16(ack), Req: uint16(req)}); err != nil {
		return err
	}
	p.unacked = append(p.unacked[:0], p.unacked[ack:]...)
	p.askedIds = true
	recvCtx := ctx
	if !blocking {
		var cancel context.CancelFunc
		recvCtx, cancel = context.WithTimeout(ctx, ShortWait)
		defer cancel()
	}
	msg, err := p.s.Recv(recvCtx)
	if err != nil {
		if !blocking && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return p.s.Fail(fmt.Errorf("%w: no reply to a non-blocking tx-ids request in %v", protocol.ErrTimeout, ShortWait))
		}
		return err
	}
	switch m := msg.(type) {
	case *MsgDone:
		if !blocking {
			return p.s.Fail(ErrUnexpectedDone)
		}
		return errDone
	case *MsgReplyTxIds:
		return p.announced(m.IDs, blocking, req)
	default:
		return fmt.Errorf("txsubmission: server got %T", msg) // the Spec rules it out
	}
}

// announced checks a reply of ids and adds them to the window, marking
// done those not worth fetching.
func (p *pull) announced(ids []TxIDAndSize, blocking bool, req int) error {
	switch {
	case len(ids) > req:
		return p.s.Fail(fmt.Errorf("%w: %d ids for %d requested", ErrTooManyTxIds, len(ids), req))
	case blocking && len(ids) == 0:
		return p.s.Fail(ErrEmptyBlockingReply)
	}
	for _, a := range ids {
		if a.Size == 0 || int64(a.Size) > int64(p.opts.MaxTxSize) {
			return p.s.Fail(fmt.Errorf("%w: tx %s of %d bytes, max %d", ErrBadTxSize, a.ID.Short(), a.Size, p.opts.MaxTxSize))
		}
	}
	for _, a := range ids {
		skip := p.known(a.ID) || p.fetching(a.ID)
		p.unacked = append(p.unacked, pending{id: a.ID, size: a.Size, done: skip})
	}
	return nil
}

// fetching reports whether id is in the window and still to be fetched: an
// id announced twice is fetched once.
func (p *pull) fetching(id block.Hash) bool {
	for _, e := range p.unacked {
		if e.id == id && !e.done {
			return true
		}
	}
	return false
}

// requestTxs fetches the oldest txs still wanted, up to the request limits,
// checks the reply and adds every tx to the mempool.
func (p *pull) requestTxs(ctx context.Context) error {
	var (
		batch []int // positions in unacked, which stay put until the next ack
		ids   []block.Hash
		bytes int
	)
	for i := range p.unacked {
		e := &p.unacked[i]
		if e.done {
			continue
		}
		if p.known(e.id) { // another peer delivered it meanwhile
			e.done = true
			continue
		}
		if len(batch) == p.opts.MaxTxsPerRequest || (len(batch) > 0 && bytes+int(e.size) > p.opts.MaxRequestBytes) {
			break
		}
		batch = append(batch, i)
		ids = append(ids, e.id)
		bytes += int(e.size)
	}
	if len(batch) == 0 {
		return nil
	}
	if p.opts.Admit != nil {
		if err := p.opts.Admit(ctx); err != nil {
			return err
		}
	}
	p.askedIds = false
	if err := p.s.Send(&MsgRequestTxs{IDs: ids}); err != nil {
		return err
	}
	msg, err := p.s.Recv(ctx)
	if err != nil {
		return err
	}
	reply, ok := msg.(*MsgReplyTxs)
	if !ok {
		return fmt.Errorf("txsubmission: server got %T", msg) // the Spec rules it out
	}
	// The reply is the requested txs the client still holds, in request
	// order: a subsequence of ids. Check all of it before adding any.
	j := 0
	for _, tx := range reply.Txs {
		h := block.HashBytes(tx)
		for j < len(ids) && ids[j] != h {
			j++
		}
		if j == len(ids) {
			return p.s.Fail(fmt.Errorf("%w: tx %s", ErrUnrequestedTx, h.Short()))
		}
		if want := p.unacked[batch[j]].size; len(tx) != int(want) {
			return p.s.Fail(fmt.Errorf("%w: tx %s has %d bytes, announced %d", ErrSizeMismatch, h.Short(), len(tx), want))
		}
		j++
	}
	for _, i := range batch {
		p.unacked[i].done = true // the ones left out are gone from the client
	}
	// The client waits for the next request while the txs are added:
	// bound the wait for room, so it never waits out Idle's timeout.
	addCtx, cancel := context.WithTimeout(ctx, p.opts.MaxAddWait)
	defer cancel()
	// The reply goes to the mempool whole, which checks its signatures
	// together; each tx's outcome is then judged in order, as if added alone.
	errs := p.mempool.AddTxs(addCtx, reply.Txs)
	if len(errs) != len(reply.Txs) {
		return fmt.Errorf("txsubmission: the mempool answered %d txs with %d errors", len(reply.Txs), len(errs))
	}
	for i, err := range errs {
		switch {
		case err == nil:
		case addCtx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
			// This add, and those after it, gave up waiting.
			if ctx.Err() == nil {
				return nil // no room for MaxAddWait: the rest are dropped
			}
			return ctx.Err()
		case p.opts.IsInvalid(err):
			if err := p.noteInvalid(block.HashBytes(reply.Txs[i]), err); err != nil {
				return err
			}
		default:
			// A duplicate (another peer was first), a conflict with the
			// mempool, a local failure: not the client's fault.
		}
	}
	return nil
}

// noteInvalid counts an invalid tx; one past MaxInvalidTxs within
// InvalidTxWindow is a violation.
func (p *pull) noteInvalid(id block.Hash, cause error) error {
	now := time.Now()
	stale := 0
	for stale < len(p.invalid) && now.Sub(p.invalid[stale]) >= p.opts.InvalidTxWindow {
		stale++
	}
	p.invalid = append(append(p.invalid[:0], p.invalid[stale:]...), now)
	if len(p.invalid) > p.opts.MaxInvalidTxs {
		return p.s.Fail(fmt.Errorf("%w: %d within %v, the last %s: %w", ErrTooManyInvalidTxs, len(p.invalid), p.opts.InvalidTxWindow, id.Short(), cause))
	}
	return nil
}
