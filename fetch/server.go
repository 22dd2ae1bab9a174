package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/logging"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network"
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
// ErrNotHeld. The client sees the stream close and re-plans elsewhere. One
// such request is no violation — an offer races a prune — but each costs
// the peer notHeldCost of its budget of useless requests, and one past it
// is (network.ErrWasteful); the line that logs them is limited per peer.
// Offsets beyond the body are the client's violation (ErrBadRequest).
//
// It answers /leios/fetch/1 and /leios/fetch/2 alike: their messages
// differ, what they ask of the store does not.
type Server struct {
	Store  Store
	Limits block.EBLimits // of the bodies a multi-block request reads
	Logger *slog.Logger   // default slog.Default()
	// Waste charges n useless requests of kind what to the peer of the
	// session ctx belongs to. Nil: the peer the host serves
	// (network.Peer.Waste); none outside a host.
	Waste func(ctx context.Context, n int, what string) error

	lines logging.Limiter // not-held lines, per peer
}

// notHeldCost is what a request for data not held costs its peer's budget
// of useless requests, in stale notifications: each ends a stream, which
// the peer opens anew, so it costs more than a message. With the host's
// budget, a hundred in a burst, then one a second.
const notHeldCost = 100

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
		case *MsgMultiBlockRequest:
			err = srv.serveBlocks(s, m.EbHashes)
		case *MsgTxsRequest2:
			err = srv.serveTxs2(s, m.EbHash, Bitmaps(m.Bitmap))
		case *MsgDone, *MsgDone2:
			return nil
		default:
			err = fmt.Errorf("fetch: server got %T", msg) // the Spec rules it out
		}
		if err != nil {
			if errors.Is(err, ErrNotHeld) {
				return srv.notHeld(ctx, err)
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
	txs, err := srv.txs(p.Hash, bm.Offsets())
	if err != nil {
		return err
	}
	return s.Send(&MsgBlockTxs{Point: p, Bitmaps: bm, Txs: txs})
}

// serveBlocks answers a multi-block request: each EB with all its txs,
// in the request's order, then no more blocks.
func (srv *Server) serveBlocks(s *protocol.Session, hashes []block.Hash) error {
	for _, h := range hashes {
		body, ok, err := srv.Store.Body(h)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: body of EB %s", ErrNotHeld, h.Short())
		}
		eb, err := block.DecodeEBBody(body, srv.Limits)
		if err != nil {
			return fmt.Errorf("fetch: the stored body of EB %s: %w", h.Short(), err)
		}
		txs, err := srv.txs(h, allOffsets(len(eb.Txs)))
		if err != nil {
			return err
		}
		if err := s.Send(&MsgMultiBlock{Body: body, Txs: txs}); err != nil {
			return err
		}
	}
	return s.Send(&MsgNoMoreBlocks{})
}

// serveTxs2 answers a /leios/fetch/2 txs request; an empty bitmap asks for
// the body.
func (srv *Server) serveTxs2(s *protocol.Session, h block.Hash, bm Bitmaps) error {
	if len(bm) == 0 {
		body, ok, err := srv.Store.Body(h)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: body of EB %s", ErrNotHeld, h.Short())
		}
		return s.Send(&MsgTxs2{Txs: TxList{body}})
	}
	txs, err := srv.txs(h, bm.Offsets())
	if err != nil {
		return err
	}
	return s.Send(&MsgTxs2{Txs: txs})
}

// txs reads the txs of EB h at offsets: offsets beyond the body are the
// client's violation, a body or tx not held ends the session.
func (srv *Server) txs(h block.Hash, offsets []int) ([][]byte, error) {
	txs, err := srv.Store.TxsByOffsets(h, offsets)
	switch {
	case errors.Is(err, leiosdb.ErrOffset):
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	case errors.Is(err, leiosdb.ErrNoBody), errors.Is(err, leiosdb.ErrTxMissing):
		return nil, fmt.Errorf("%w: %w", ErrNotHeld, err)
	}
	return txs, err
}

func allOffsets(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
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

// notHeld logs a request for data not held, a few lines a minute per
// peer, and charges the peer; err ends the session, or the peer's
// violation if it is past its budget.
func (srv *Server) notHeld(ctx context.Context, err error) error {
	key, peerAttr := "", any(nil)
	if p := network.RemotePeer(ctx); p != nil {
		key, peerAttr = string(p.ID), p.ID
	}
	srv.lines.Log(ctx, srv.logger(), slog.LevelInfo, key, "fetch: request for EB data not held; closing", "peer", peerAttr, "err", err)
	waste := srv.Waste
	if waste == nil {
		waste = func(ctx context.Context, n int, what string) error {
			if p := network.RemotePeer(ctx); p != nil {
				return p.Waste(n, what)
			}
			return nil
		}
	}
	if verr := waste(ctx, notHeldCost, "not_held"); verr != nil {
		return fmt.Errorf("%w: %w", verr, err)
	}
	return err
}

func (srv *Server) logger() *slog.Logger {
	if srv.Logger == nil {
		return slog.Default()
	}
	return srv.Logger
}
