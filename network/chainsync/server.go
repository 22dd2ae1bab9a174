package chainsync

import (
	"context"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Server serves chain sync from a Chain.
type Server struct {
	Chain Chain
}

// Serve answers one client until it sends done or the session ends. ctx
// must end with the session: it bounds the wait at the tip.
func (srv *Server) Serve(ctx context.Context, s *protocol.Session) error {
	var follower Follower // from origin unless an intersection is found
	defer func() {
		if follower != nil {
			follower.Close()
		}
	}()
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
			follower = f
			err = s.Send(&MsgIntersectFound{Point: point, Tip: srv.Chain.Tip()})
		case *MsgRequestNext:
			if follower == nil {
				if follower, err = srv.Chain.NewFollower(block.Origin); err != nil {
					return fmt.Errorf("chainsync: follower from origin: %w", err)
				}
			}
			err = srv.next(ctx, s, follower)
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

// next answers a request next: at once if the follower has an update,
// otherwise with await reply and then the update when it comes.
func (srv *Server) next(ctx context.Context, s *protocol.Session, f Follower) error {
	update, ok, err := f.TryNext()
	if err != nil {
		return fmt.Errorf("chainsync: follower: %w", err)
	}
	if !ok {
		if err := s.Send(&MsgAwaitReply{}); err != nil {
			return err
		}
		if update, err = f.Next(ctx); err != nil {
			return fmt.Errorf("chainsync: follower: %w", err)
		}
	}
	tip := srv.Chain.Tip()
	switch update.Kind {
	case block.RollForward:
		return s.Send(&MsgRollForward{Header: update.Header, Tip: tip})
	case block.RollBackward:
		return s.Send(&MsgRollBackward{Point: update.Point, Tip: tip})
	default:
		return fmt.Errorf("chainsync: follower returned update kind %d", update.Kind)
	}
}
