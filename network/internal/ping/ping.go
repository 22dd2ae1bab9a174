// Package ping is a tiny mini-protocol for testing the engine: the client
// sends ping n, the server answers pong n; the client may pipeline pings.
//
// It is test support: it must never be imported outside network/ tests.
package ping

import (
	"context"
	"fmt"
	"time"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// Message tags.
const (
	TagPing uint64 = 0
	TagPong uint64 = 1
	TagDone uint64 = 2
)

// States.
const (
	StIdle protocol.State = "Idle"
	StBusy protocol.State = "Busy"
	StDone protocol.State = "Done"
)

// MaxSize is the size limit of every state.
const MaxSize = 64

type MsgPing struct {
	_ struct{} `cbor:",toarray"`
	N uint64
}

type MsgPong struct {
	_ struct{} `cbor:",toarray"`
	N uint64
}

type MsgDone struct {
	_ struct{} `cbor:",toarray"`
}

func (*MsgPing) Tag() uint64 { return TagPing }
func (*MsgPong) Tag() uint64 { return TagPong }
func (*MsgDone) Tag() uint64 { return TagDone }

// Spec declares ping with the same timeout in every state and up to
// pipelined pings in flight beyond the first.
func Spec(timeout time.Duration, pipelined int) *protocol.Spec {
	return &protocol.Spec{
		Name:    "ping",
		Initial: StIdle,
		States: map[protocol.State]protocol.StateSpec{
			StIdle: {
				Agency:  protocol.Client,
				Next:    map[uint64]protocol.State{TagPing: StBusy, TagDone: StDone},
				MaxSize: MaxSize,
				Timeout: timeout,
			},
			StBusy: {
				Agency:  protocol.Server,
				Next:    map[uint64]protocol.State{TagPong: StIdle},
				MaxSize: MaxSize,
				Timeout: timeout,
			},
			StDone: {Agency: protocol.Nobody},
		},
		Messages: map[uint64]func() protocol.Message{
			TagPing: func() protocol.Message { return new(MsgPing) },
			TagPong: func() protocol.Message { return new(MsgPong) },
			TagDone: func() protocol.Message { return new(MsgDone) },
		},
		MaxPipelined: pipelined,
	}
}

// Serve answers every ping with the pong of the same number until done.
func Serve(ctx context.Context, s *protocol.Session) error {
	for {
		msg, err := s.Recv(ctx)
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *MsgPing:
			if err := s.Send(&MsgPong{N: m.N}); err != nil {
				return err
			}
		case *MsgDone:
			return nil
		default:
			return fmt.Errorf("ping: server got %T", msg)
		}
	}
}

// Exchange sends pings first..first+n-1, keeping up to depth in flight, and
// checks that the pongs come back in order.
func Exchange(ctx context.Context, s *protocol.Session, first uint64, n, depth int) error {
	sent, got := 0, 0
	for got < n {
		for sent < n && sent-got < depth {
			if err := s.Send(&MsgPing{N: first + uint64(sent)}); err != nil {
				return err
			}
			sent++
		}
		msg, err := s.Recv(ctx)
		if err != nil {
			return err
		}
		pong, ok := msg.(*MsgPong)
		if !ok || pong.N != first+uint64(got) {
			return fmt.Errorf("ping: got %#v, want pong %d", msg, first+uint64(got))
		}
		got++
	}
	return nil
}
