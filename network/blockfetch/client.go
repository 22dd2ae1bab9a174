package blockfetch

import (
	"context"
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// ErrBlockMismatch is the violation of a server whose blocks are not the
// requested range, or whose body does not match its header.
var ErrBlockMismatch = protocol.NewViolation("blockfetch: block does not match the request")

// ErrNoBlocks means the server does not have the range. It is not a
// violation: the server's chain may have moved since it announced it.
var ErrNoBlocks = errors.New("blockfetch: peer has no blocks for the range")

// DefaultMaxBlocks bounds one batch, so a server cannot stream without end.
const DefaultMaxBlocks = 1000

// FetchRange fetches the blocks from..to over a session of its own, opened
// with open and closed once the batch is in: block fetch streams live for
// one range, so none sits idle between blocks (Spec).
func FetchRange(ctx context.Context, open func(context.Context) (*protocol.Session, error), from, to block.Point) ([]*block.Block, error) {
	s, err := open(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	blocks, err := NewClient(s, 0).Fetch(ctx, from, to)
	if err == nil {
		_ = s.Send(&MsgClientDone{}) // the blocks are checked: a failed goodbye loses nothing
	}
	return blocks, err
}

// Client fetches ranges over one session, one request at a time.
type Client struct {
	s         *protocol.Session
	maxBlocks int
}

// NewClient returns a client on s; maxBlocks bounds a batch (0:
// DefaultMaxBlocks).
func NewClient(s *protocol.Session, maxBlocks int) *Client {
	if maxBlocks <= 0 {
		maxBlocks = DefaultMaxBlocks
	}
	return &Client{s: s, maxBlocks: maxBlocks}
}

// Fetch returns the blocks from..to, inclusive, oldest first, checked: each
// body matches its header, the first is from, each extends the previous
// one, and the last is to.
func (c *Client) Fetch(ctx context.Context, from, to block.Point) ([]*block.Block, error) {
	if err := c.s.Send(&MsgRequestRange{From: from, To: to}); err != nil {
		return nil, err
	}
	msg, err := c.s.Recv(ctx)
	if err != nil {
		return nil, err
	}
	switch msg.(type) {
	case *MsgNoBlocks:
		return nil, fmt.Errorf("%w: %s..%s", ErrNoBlocks, from, to)
	case *MsgStartBatch:
	default:
		return nil, fmt.Errorf("blockfetch: client got %T", msg) // the Spec rules it out
	}
	var blocks []*block.Block
	for {
		msg, err := c.s.Recv(ctx)
		if err != nil {
			return nil, err
		}
		switch m := msg.(type) {
		case *MsgBlock:
			if err := c.check(blocks, m.Block, from, to); err != nil {
				return nil, c.s.Fail(err)
			}
			blocks = append(blocks, m.Block)
		case *MsgBatchDone:
			if len(blocks) == 0 || blocks[len(blocks)-1].Point() != to {
				return nil, c.s.Fail(fmt.Errorf("%w: batch of %d blocks ends before %s", ErrBlockMismatch, len(blocks), to))
			}
			return blocks, nil
		default:
			return nil, fmt.Errorf("blockfetch: client got %T", msg) // the Spec rules it out
		}
	}
}

// check verifies that b is the next block of the range from..to, after got.
func (c *Client) check(got []*block.Block, b *block.Block, from, to block.Point) error {
	if err := b.CheckBody(); err != nil {
		return fmt.Errorf("%w: block %d: %w", ErrBlockMismatch, b.Header.BlockNumber, err)
	}
	if len(got) == 0 {
		if b.Point() != from {
			return fmt.Errorf("%w: first block is %s, asked from %s", ErrBlockMismatch, b.Point(), from)
		}
		return nil
	}
	prev := got[len(got)-1]
	switch {
	case prev.Point() == to:
		return fmt.Errorf("%w: block after the end of the range %s", ErrBlockMismatch, to)
	case b.Header.Prev() != prev.Hash():
		return fmt.Errorf("%w: block %s does not extend %s", ErrBlockMismatch, b.Point(), prev.Point())
	case len(got) >= c.maxBlocks:
		return fmt.Errorf("%w: more than %d blocks", ErrBlockMismatch, c.maxBlocks)
	}
	return nil
}
