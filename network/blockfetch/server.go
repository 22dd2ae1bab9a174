package blockfetch

import (
	"context"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Server serves block ranges.
type Server struct {
	// BlockRange returns the blocks from..to, inclusive, oldest first. An
	// error or an empty range is answered with no blocks.
	BlockRange func(from, to block.Point) ([]*block.Block, error)
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

func (srv *Server) serveRange(s *protocol.Session, from, to block.Point) error {
	blocks, err := srv.BlockRange(from, to)
	if err != nil || len(blocks) == 0 {
		return s.Send(&MsgNoBlocks{})
	}
	if err := s.Send(&MsgStartBatch{}); err != nil {
		return err
	}
	for _, b := range blocks {
		if err := s.Send(&MsgBlock{Block: b}); err != nil {
			return err
		}
	}
	return s.Send(&MsgBatchDone{})
}
