package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Store is the LeiosDB as fetch reads it: the server answers from it, and
// CheckConsistency compares the decision logic with it. *leiosdb.DB
// implements it.
type Store interface {
	PointInfo(p block.Point) (leiosdb.PointInfo, bool, error)
	Points(fromSlot uint64) ([]leiosdb.PointInfo, error)
	Missing(p block.Point) ([]int, error)
	Body(ebHash block.Hash) ([]byte, bool, error)
	TxsByOffsets(ebHash block.Hash, offsets []int) ([][]byte, error)
}

// Server answers LeiosFetch requests from a Store.
//
// A request for a body or txs the store does not hold (never announced,
// body not held, a tx of the closure still missing, or GC'd since the
// offer) has no answer in the protocol: the server ends the session with
// ErrNotHeld, which is logged and is not a violation. The client sees the
// stream close and re-plans elsewhere. Offsets beyond the body are the
// client's violation (ErrBadRequest).
type Server struct {
	Store  Store
	Logger *slog.Logger // default slog.Default()
}

// Serve answers one client until it sends done or the session ends.
func (srv *Server) Serve(ctx context.Context, s *protocol.Session) error {
	for {
		msg, err := s.Recv(ctx)
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *MsgBlockRequest:
			err = srv.serveBody(s, m.Point)
		case *MsgBlockTxsRequest:
			err = srv.serveTxs(s, m.Point, m.Bitmaps)
		case *MsgDone:
			return nil
		default:
			err = fmt.Errorf("fetch: server got %T", msg) // the Spec rules it out
		}
		if err != nil {
			if errors.Is(err, ErrNotHeld) {
				srv.logger().Info("fetch: request for EB data not held; closing", "err", err)
			}
			return err
		}
	}
}

func (srv *Server) serveBody(s *protocol.Session, p block.Point) error {
	if err := srv.holds(p); err != nil {
		return err
	}
	body, ok, err := srv.Store.Body(p.Hash)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: body of %s", ErrNotHeld, p)
	}
	return s.Send(&MsgBlock{Body: body})
}

func (srv *Server) serveTxs(s *protocol.Session, p block.Point, bm Bitmaps) error {
	if err := srv.holds(p); err != nil {
		return err
	}
	txs, err := srv.Store.TxsByOffsets(p.Hash, bm.Offsets())
	switch {
	case errors.Is(err, leiosdb.ErrOffset):
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	case errors.Is(err, leiosdb.ErrNoBody), errors.Is(err, leiosdb.ErrTxMissing):
		return fmt.Errorf("%w: %w", ErrNotHeld, err)
	case err != nil:
		return err
	}
	return s.Send(&MsgBlockTxs{Point: p, Bitmaps: bm, Txs: txs})
}

// holds checks that p is a known point holding its body.
func (srv *Server) holds(p block.Point) error {
	info, ok, err := srv.Store.PointInfo(p)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%w: unknown point %s", ErrNotHeld, p)
	case !info.HasBody:
		return fmt.Errorf("%w: body of %s", ErrNotHeld, p)
	}
	return nil
}

func (srv *Server) logger() *slog.Logger {
	if srv.Logger == nil {
		return slog.Default()
	}
	return srv.Logger
}
