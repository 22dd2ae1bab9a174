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
	Tx(txHash block.Hash) ([]byte, bool, error)
	HasTxs(hashes []block.Hash, out []bool) (int, error)
}

// Server answers LeiosFetch requests from a Store.
//
// A request for a body or txs the store does not hold (never announced,
// body not held, a tx of the closure still missing, or GC'd since the
// offer) has no answer in the protocol: the server ends the session with
// ErrNotHeld, before the answer's first byte. The client sees the stream
// close and re-plans elsewhere. One such request is no violation — an
// offer races a prune — but each costs the peer notHeldCost of its budget
// of useless requests, and one past it is (network.ErrWasteful); the line
// that logs them is limited per peer. Offsets beyond the body are the
// client's violation (ErrBadRequest).
//
// It answers one request at a time, each written as it is read from the
// store (reply.go): a session holds one EB's body and one chunk of its
// txs, within the host's bound on what its servers hold, never a closure.
//
// It answers /leios/fetch/1 and /leios/fetch/2 alike: their messages
// differ, what they ask of the store does not.
type Server struct {
	Store  Store
	Logger *slog.Logger // default slog.Default()
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
	info, err := srv.holds(p)
	if err != nil {
		return err
	}
	return srv.answer(s, p.Hash, int(info.EbSize), selection{}, func(body []byte) shape {
		return shape{msg: &MsgBlock{Body: body}, pre: []byte{0x82, byte(TagBlock)}, sendBody: true}
	})
}

func (srv *Server) serveTxs(s *protocol.Session, p block.Point, bm Bitmaps) error {
	info, err := srv.holds(p)
	if err != nil {
		return err
	}
	point, err := block.Marshal(p)
	if err != nil {
		return err
	}
	pre := append(append([]byte{0x84, byte(TagBlockTxs)}, point...), appendBitmaps(nil, bm)...)
	return srv.answer(s, p.Hash, int(info.EbSize), selection{bm: bm}, func([]byte) shape {
		return shape{msg: &MsgBlockTxs{Point: p, Bitmaps: bm}, pre: pre, list: true}
	})
}

// serveBlocks answers a multi-block request: each EB with all its txs,
// in the request's order, then no more blocks.
func (srv *Server) serveBlocks(s *protocol.Session, hashes []block.Hash) error {
	for _, h := range hashes {
		err := srv.answer(s, h, bodyGuess, selection{all: true}, func(body []byte) shape {
			return shape{msg: &MsgMultiBlock{Body: body}, pre: []byte{0x83, byte(TagMultiBlock)}, sendBody: true, list: true}
		})
		if err != nil {
			return err
		}
	}
	return s.Send(&MsgNoMoreBlocks{})
}

// serveTxs2 answers a /leios/fetch/2 txs request; an empty bitmap asks for
// the body.
func (srv *Server) serveTxs2(s *protocol.Session, h block.Hash, bm Bitmaps) error {
	if len(bm) == 0 {
		return srv.answer(s, h, bodyGuess, selection{}, func(body []byte) shape {
			pre := block.AppendHead([]byte{0x82, byte(TagTxs2), 0x81}, majorBytes, uint64(len(body)))
			return shape{msg: &MsgTxs2{Txs: TxList{body}}, pre: pre, sendBody: true}
		})
	}
	return srv.answer(s, h, bodyGuess, selection{bm: bm}, func([]byte) shape {
		return shape{msg: &MsgTxs2{}, pre: []byte{0x82, byte(TagTxs2)}, list: true}
	})
}

// answer sends the answer shapeOf lays out of EB h's body and the txs sel
// selects, written as it is read (reply.go), holding what it reads of the
// host's bound: room for a body of bodySize (a guess if unknown), a chunk
// and a tx, before it reads the body; the room it finds it needs, if more,
// before it reads the body again. It releases them once the answer is
// written. What the store does not hold ends the session before the
// answer's first byte (ErrNotHeld).
func (srv *Server) answer(s *protocol.Session, h block.Hash, bodySize int, sel selection, shapeOf func(body []byte) shape) error {
	room := bodySize + replyChunk + txGuess
	for tries := 0; ; tries++ {
		release, err := s.Hold(room)
		if err != nil {
			return err
		}
		r, err := srv.prepare(h, sel, shapeOf)
		if err == nil && r.held() > room {
			if tries > 0 { // the body is the one its hash names: it cannot grow
				err = fmt.Errorf("fetch: the body of EB %s changed while it was read", h.Short())
			} else {
				release()
				room = r.held()
				continue
			}
		}
		if err == nil {
			err = srv.heldTxs(r)
		}
		if err == nil {
			err = s.SendStreamed(r)
		}
		release()
		return err
	}
}

// prepare reads EB h's body and lays out its answer.
func (srv *Server) prepare(h block.Hash, sel selection, shapeOf func(body []byte) shape) (*reply, error) {
	body, ok, err := srv.Store.Body(h)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: body of EB %s", ErrNotHeld, h.Short())
	}
	r := &reply{store: srv.Store, hash: h, body: body, sel: sel}
	if err := r.measure(); err != nil {
		return nil, err
	}
	r.shape = shapeOf(body)
	return r, nil
}

// probeBatch is how many tx hashes heldTxs asks the store about at once:
// 32 kB of hashes, within the chunk the answer holds.
const probeBatch = 1024

// heldTxs checks that the store holds every tx r selects, without reading
// them, so that a request for txs not held ends the session before the
// answer's first byte (ErrNotHeld), as one for a body not held does.
func (srv *Server) heldTxs(r *reply) error {
	if !r.list || r.count == 0 {
		return nil
	}
	hashes := make([]block.Hash, 0, min(r.count, probeBatch))
	offsets := make([]int, 0, cap(hashes))
	out := make([]bool, cap(hashes))
	probe := func() error {
		held, err := srv.Store.HasTxs(hashes, out[:len(hashes)])
		if err != nil {
			return err
		}
		if held < len(hashes) {
			for j, ok := range out[:len(hashes)] {
				if !ok {
					return fmt.Errorf("%w: tx %d (%s) of EB %s", ErrNotHeld, offsets[j], hashes[j].Short(), r.hash.Short())
				}
			}
		}
		hashes, offsets = hashes[:0], offsets[:0]
		return nil
	}
	err := r.eachSelected(func(i int, h block.Hash, _ int) error {
		hashes, offsets = append(hashes, h), append(offsets, i)
		if len(hashes) == cap(hashes) {
			return probe()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(hashes) > 0 {
		return probe()
	}
	return nil
}

// holds checks that p is a known point holding its body.
func (srv *Server) holds(p block.Point) (leiosdb.PointInfo, error) {
	info, ok, err := srv.Store.PointInfo(p)
	switch {
	case err != nil:
		return info, err
	case !ok:
		return info, fmt.Errorf("%w: unknown point %s", ErrNotHeld, p)
	case !info.HasBody:
		return info, fmt.Errorf("%w: body of %s", ErrNotHeld, p)
	}
	return info, nil
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
