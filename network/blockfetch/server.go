package blockfetch

import (
	"context"
	"fmt"
	"iter"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Blocks returns the blocks from..to, inclusive, oldest first, one at a
// time: a range is served as it is read, so a request for the whole chain
// holds one block, not the chain, for as long as the peer takes to read it
// (and the engine bounds that: protocol.ErrSlowReader). An error, or a range
// with no block, is answered with no blocks.
type Blocks func(from, to block.Point) (iter.Seq2[*block.Block, error], error)

// FromSlices serves ranges from a store that holds a range in memory anyway
// (an in-memory chain).
func FromSlices(blockRange func(from, to block.Point) ([]*block.Block, error)) Blocks {
	return func(from, to block.Point) (iter.Seq2[*block.Block, error], error) {
		blocks, err := blockRange(from, to)
		if err != nil {
			return nil, err
		}
		return func(yield func(*block.Block, error) bool) {
			for _, b := range blocks {
				if !yield(b, nil) {
					return
				}
			}
		}, nil
	}
}

// Server serves block ranges.
type Server struct {
	Blocks Blocks
}

// Serve answers one client until it sends done or the session ends.
func (srv *Server) Serve(ctx context.Context, s *protocol.Session) error {
	for {
		msg, err := s.Recv(ctx)
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *MsgRequestRange:
			err = srv.serveRange(s, m.From, m.To)
		case *MsgClientDone:
			return nil
		default:
			err = fmt.Errorf("blockfetch: server got %T", msg) // the Spec rules it out
		}
		if err != nil {
			return err
		}
	}
}

// serveRange sends the range block by block. A block that cannot be read
// once the batch has begun ends the session: the protocol has no way to
// take back a batch.
func (srv *Server) serveRange(s *protocol.Session, from, to block.Point) error {
	blocks, err := srv.Blocks(from, to)
	if err != nil {
		return s.Send(&MsgNoBlocks{})
	}
	next, stop := iter.Pull2(blocks)
	defer stop()
	b, err, ok := next()
	if !ok || err != nil {
		return s.Send(&MsgNoBlocks{})
	}
	if err := s.Send(&MsgStartBatch{}); err != nil {
		return err
	}
	for ; ok; b, err, ok = next() {
		if err != nil {
			return fmt.Errorf("blockfetch: reading the range %s..%s: %w", from, to, err)
		}
		if err := s.Send(&MsgBlock{Block: b}); err != nil {
			return err
		}
	}
	return s.Send(&MsgBatchDone{})
}
