package chainsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Server serves chain sync from a Chain.
type Server struct {
	Chain Chain
	// KeepAlive bounds how long a request next is held at the tip: past it,
	// with no news, the server answers with a roll backward to the point
	// the client already has, so that an honest server on a quiet chain
	// never runs into the client's must-reply timeout. Default
	// protocol.KeepAlive.
	KeepAlive time.Duration
}

// Serve answers one client until it sends done or the session ends. ctx
// must end with the session: it bounds the wait at the tip.
//
// As Cardano's server does, the first request next after an intersection
// is found (or, without one, the first of the session, at the origin) is
// answered with a roll backward to that point; the roll forwards follow.
func (srv *Server) Serve(ctx context.Context, s *protocol.Session) error {
	var follower Follower // from origin unless an intersection is found
	defer func() {
		if follower != nil {
			follower.Close()
		}
	}()
	at := block.Origin // the client's point: where the last answer left it
	rewind := true     // the next request next rolls back to at first
	for {
		msg, err := s.Recv(ctx)
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *MsgFindIntersect:
			point, found := srv.Chain.FindIntersect(m.Points)
			if !found {
				err = s.Send(&MsgIntersectNotFound{Tip: srv.Chain.Tip()})
				break
			}
			f, ferr := srv.Chain.NewFollower(point)
			if ferr != nil {
				return fmt.Errorf("chainsync: follower from %s: %w", point, ferr)
			}
			if follower != nil {
				follower.Close()
			}
			follower, at, rewind = f, point, true
			err = s.Send(&MsgIntersectFound{Point: point, Tip: srv.Chain.Tip()})
		case *MsgRequestNext:
			if follower == nil {
				if follower, err = srv.Chain.NewFollower(block.Origin); err != nil {
					return fmt.Errorf("chainsync: follower from origin: %w", err)
				}
			}
			if rewind {
				rewind = false
				err = s.Send(&MsgRollBackward{Point: at, Tip: srv.Chain.Tip()})
				break
			}
			at, err = srv.next(ctx, s, follower, at)
		case *MsgDone:
			return nil
		default:
			return fmt.Errorf("chainsync: server got %T", msg) // the Spec rules it out
		}
		if err != nil {
			return err
		}
	}
}

// next answers a request next from a client at point at: at once if the
// follower has an update, otherwise with await reply and then the update
// when it comes, or a keep-alive. It returns the client's new point.
func (srv *Server) next(ctx context.Context, s *protocol.Session, f Follower, at block.Point) (block.Point, error) {
	update, ok, err := f.TryNext()
	if err != nil {
		return at, fmt.Errorf("chainsync: follower: %w", err)
	}
	if !ok {
		if err := s.Send(&MsgAwaitReply{}); err != nil {
			return at, err
		}
		if update, err = srv.await(ctx, f, at); err != nil {
			return at, err
		}
	}
	tip := srv.Chain.Tip()
	switch update.Kind {
	case block.RollForward:
		return update.Header.Point(), s.Send(&MsgRollForward{Header: update.Header, Tip: tip})
	case block.RollBackward:
		return update.Point, s.Send(&MsgRollBackward{Point: update.Point, Tip: tip})
	default:
		return at, fmt.Errorf("chainsync: follower returned update kind %d", update.Kind)
	}
}

// await waits for the follower's next update, or for KeepAlive: then the
// update is a roll backward to at, the client's own point.
func (srv *Server) await(ctx context.Context, f Follower, at block.Point) (block.ChainUpdate, error) {
	keepAlive := srv.KeepAlive
	if keepAlive <= 0 {
		keepAlive = protocol.KeepAlive
	}
	waitCtx, cancel := context.WithTimeout(ctx, keepAlive)
	defer cancel()
	update, err := f.Next(waitCtx)
	switch {
	case err == nil:
		return update, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return block.ChainUpdate{Kind: block.RollBackward, Point: at}, nil
	default:
		return block.ChainUpdate{}, fmt.Errorf("chainsync: follower: %w", err)
	}
}
