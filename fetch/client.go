package fetch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Reply is a checked answer to a Request: the body (Kind RequestBody),
// the txs in the request's offset order (RequestTxs), each with the hash
// the check computed, or the EBs whole (RequestBlocks).
type Reply struct {
	Body   *block.EBBody
	Txs    []block.HashedTx
	Blocks []BlockReply
}

// BlockReply is one EB of a multi-block reply, checked: its body hashes to
// the EB hash asked for, and its txs to what the body names.
type BlockReply struct {
	Point block.Point
	Body  *block.EBBody
	Txs   []block.HashedTx
}

// Client runs the client side of one LeiosFetch session, /leios/fetch/1
// or /leios/fetch/2 as its session's Spec says, with pipelining: Send may
// run ahead of Next by up to MaxPipelined requests. Send and Next may be
// called from different goroutines (one each); replies come in request
// order.
type Client struct {
	s      *protocol.Session
	limits block.EBLimits
	v2     bool // the session speaks /leios/fetch/2

	mu   sync.Mutex // guards sent
	sent []*Request // sent, not yet answered, oldest first
}

// NewClient returns a client on s checking bodies against limits.
func NewClient(s *protocol.Session, limits block.EBLimits) *Client {
	return &Client{s: s, limits: limits, v2: s.Spec().Version >= 2}
}

// Send sends r. It fails if more than MaxPipelined requests are already
// waiting behind the first, or if the session ended.
func (c *Client) Send(r *Request) error {
	msg, err := c.message(r)
	if err != nil {
		return fmt.Errorf("fetch: request %d: %w", r.ID, err)
	}
	// Queued before the send: the reply may be read the moment it is out.
	c.mu.Lock()
	c.sent = append(c.sent, r)
	c.mu.Unlock()
	if err := c.s.Send(msg); err != nil {
		c.mu.Lock()
		c.sent = c.sent[:len(c.sent)-1]
		c.mu.Unlock()
		return err
	}
	return nil
}

// message is r in the session's version.
func (c *Client) message(r *Request) (protocol.Message, error) {
	if c.v2 {
		return message2(r)
	}
	switch r.Kind {
	case RequestBody:
		return &MsgBlockRequest{Point: r.Point}, nil
	case RequestTxs:
		bm, err := BitmapsOf(r.Offsets)
		if err != nil {
			return nil, err
		}
		return &MsgBlockTxsRequest{Point: r.Point, Bitmaps: bm}, nil
	case RequestBlocks:
		return nil, errors.New("a multi-block request on /leios/fetch/1, which has none")
	}
	return nil, errors.New("a request of no kind")
}

// Next waits for the reply to the oldest outstanding request and checks it
// against that request. A mismatch fails the session with ErrBadBody or
// ErrBadTxs.
func (c *Client) Next(ctx context.Context) (*Request, Reply, error) {
	msg, err := c.s.Recv(ctx)
	if err != nil {
		return nil, Reply{}, err
	}
	c.mu.Lock()
	if len(c.sent) == 0 {
		c.mu.Unlock()
		// The engine only delivers replies in a state a request led to.
		return nil, Reply{}, c.s.Fail(fmt.Errorf("fetch: %T without a request", msg))
	}
	r := c.sent[0]
	c.sent[0] = nil
	c.sent = c.sent[1:]
	c.mu.Unlock()
	var reply Reply
	switch m := msg.(type) {
	case *MsgBlock:
		reply.Body, err = c.checkBody(r, m)
	case *MsgBlockTxs:
		reply.Txs, err = checkTxs(r, m)
	case *MsgTxs2:
		reply, err = c.checkTxs2(r, m)
	case *MsgMultiBlock, *MsgNoMoreBlocks:
		reply.Blocks, err = c.recvBlocks(ctx, r, m)
	default:
		err = fmt.Errorf("fetch: client got %T", msg) // the Spec rules it out
	}
	if err != nil {
		return r, Reply{}, c.s.Fail(err)
	}
	return r, reply, nil
}

// Outstanding is how many requests were sent and not yet answered.
func (c *Client) Outstanding() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sent)
}

// Done ends the protocol; call it only with nothing outstanding.
func (c *Client) Done() error {
	if c.v2 {
		return c.s.Send(&MsgDone2{})
	}
	return c.s.Send(&MsgDone{})
}

// checkBody checks a body against a body request: its size is the
// announced one, it hashes to the point's hash, it is a valid EB body.
func (c *Client) checkBody(r *Request, m *MsgBlock) (*block.EBBody, error) {
	if r.Kind != RequestBody {
		return nil, fmt.Errorf("%w: a body in answer to a txs request for %s", ErrBadBody, r.Point)
	}
	if uint64(len(m.Body)) != r.EbSize {
		return nil, fmt.Errorf("%w: %s: %d bytes, announced %d", ErrBadBody, r.Point, len(m.Body), r.EbSize)
	}
	if block.HashBytes(m.Body) != r.Point.Hash {
		return nil, fmt.Errorf("%w: %s: wrong hash", ErrBadBody, r.Point)
	}
	eb, err := block.DecodeEBBody(m.Body, c.limits)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadBody, r.Point, err)
	}
	return eb, nil
}

// checkTxs checks a txs reply against a txs request: same point, same
// bitmaps, and each tx hashes to what the EB body names at its offset.
// Positional matching also rules out duplicates: an EB names no tx twice.
func checkTxs(r *Request, m *MsgBlockTxs) ([]block.HashedTx, error) {
	if r.Kind != RequestTxs {
		return nil, fmt.Errorf("%w: txs in answer to a body request for %s", ErrBadTxs, r.Point)
	}
	if m.Point != r.Point {
		return nil, fmt.Errorf("%w: txs of %s, asked for %s", ErrBadTxs, m.Point, r.Point)
	}
	if want, _ := BitmapsOf(r.Offsets); !m.Bitmaps.Equal(want) {
		return nil, fmt.Errorf("%w: %s: bitmaps differ from the request", ErrBadTxs, r.Point)
	}
	return hashedAs(r.Point, r.TxHashes, r.Offsets, m.Txs)
}
