package notify

import (
	"context"
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// Serve answers one peer: each request next gets the next notification of
// the peer's FIFO, as soon as there is one. The FIFO starts with the
// relay's current state (see register). Serve returns when the peer sends
// done, the session ends, or the relay drops the peer (ErrSlowPeer).
func (r *Relay) Serve(ctx context.Context, s *protocol.Session) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	q := r.register(ctx, stop, allNotifications)
	defer r.unregister(q)
	for {
		msg, err := s.Recv(ctx)
		if err != nil {
			return stopCause(ctx, s, err)
		}
		switch msg.(type) {
		case *MsgRequestNext:
		case *MsgDone:
			return nil
		default:
			return fmt.Errorf("notify: server got %T", msg) // the Spec rules it out
		}
		m, err := r.next(ctx, q)
		if err != nil {
			return stopCause(ctx, s, err)
		}
		if err := s.Send(m); err != nil {
			return err
		}
	}
}

// stopCause reports why Serve stopped rather than the bare context error:
// the relay dropped the peer (ErrSlowPeer), or the session ended.
func stopCause(ctx context.Context, s *protocol.Session, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrSlowPeer) {
		return cause
	}
	if serr := s.Err(); serr != nil {
		return serr
	}
	return err
}
