package hostile

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	p2pnetwork "github.com/libp2p/go-libp2p/core/network"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/pause"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/notify"
)

// junkIdentities is how many identities CIPJunk runs at once; each the
// node bans is replaced by a fresh one.
const junkIdentities = 4

// junkSlot is the slot CIPJunk's votes and offers name: below the
// immutable tip of any node past its first k blocks.
const junkSlot = 1

// cipServer serves one of the CIP's token streams the node opens to the
// identity as its client: answer runs the server's side of the session.
type cipServer struct {
	spec   *protocol.Spec
	answer func(ctx context.Context, s *protocol.Session) error
}

// cipHandlers are libp2p handlers for the CIP's three streams, each served
// by its answer on a session of the node's own spec; handlers counts the
// handlers running, so the attack waits for them before it returns.
func cipHandlers(ctx context.Context, tally *Tally, handlers *sync.WaitGroup, servers ...cipServer) map[libp2pprotocol.ID]p2pnetwork.StreamHandler {
	out := map[libp2pprotocol.ID]p2pnetwork.StreamHandler{}
	for _, srv := range servers {
		out[libp2pprotocol.ID(srv.spec.ID())] = func(st p2pnetwork.Stream) {
			handlers.Add(1)
			defer handlers.Done()
			tally.Streams.Add(1)
			s := protocol.NewSession(ctx, protocol.Config{Spec: srv.spec, Role: protocol.Server, Stream: st})
			defer s.Close()
			_ = srv.answer(ctx, s)
		}
	}
	return out
}

// holdGrants takes the node's grants and sends nothing: an announce stream
// with no news. It returns when the stream ends.
func holdGrants(ctx context.Context, s *protocol.Session) error {
	for {
		if _, err := s.Recv(ctx); err != nil {
			return err
		}
	}
}

// junkHash is a hash no EB has: n in its first bytes.
func junkHash(n uint64) block.Hash {
	var h block.Hash
	binary.BigEndian.PutUint64(h[:], n)
	h[31] = 0x5a
	return h
}

// answerWithJunk spends every grant the node makes on junk(i), i counting
// up from the stream's start.
func answerWithJunk(tally *Tally, junk func(i uint64) protocol.Message) func(context.Context, *protocol.Session) error {
	return func(ctx context.Context, s *protocol.Session) error {
		var i uint64
		for {
			m, err := s.Recv(ctx)
			if err != nil {
				return err
			}
			grant, ok := m.(*notify.MsgLeiosRequestNext)
			if !ok {
				return nil // done: the node closed the stream
			}
			for range grant.Grants() {
				if err := s.Send(junk(i)); err != nil {
					return err
				}
				i++
				tally.Junk.Add(1)
			}
		}
	}
}

// cipJunk runs junkIdentities identities at once, each answering the
// node's grants with votes and offers for slot junkSlot; when the node
// cuts or bans one, a fresh one takes its place.
func cipJunk(ctx context.Context, t Target, tally *Tally) error {
	var handlers sync.WaitGroup
	defer handlers.Wait()
	var seq atomic.Uint64 // distinct hashes across identities
	servers := []cipServer{
		{notify.AnnounceSpec(), holdGrants},
		{notify.VotesSpec(), answerWithJunk(tally, func(uint64) protocol.Message {
			n := seq.Add(1)
			return &notify.MsgLeiosVote{Vote: notify.LeiosVote{Slot: junkSlot, EbHash: junkHash(n), VoterID: uint16(n), Signature: block.Bytes48{0xa0}}}
		})},
		{notify.BlockNotifySpec(), answerWithJunk(tally, func(uint64) protocol.Message {
			return &notify.MsgLeiosBlockOffer{Slot: junkSlot, EbHash: junkHash(seq.Add(1)), BlockHeight: 1}
		})},
	}
	g, gctx := errgroup.WithContext(ctx)
	for range junkIdentities {
		g.Go(func() error {
			for gctx.Err() == nil {
				h, err := identity(gctx, t, tally, cipHandlers(gctx, tally, &handlers, servers...))
				if err != nil {
					if !pause.For(gctx, time.Second) {
						return nil
					}
					continue
				}
				if disconnected(gctx, h, t) {
					tally.Cut.Add(1)
				}
				_ = h.Close()
			}
			return nil
		})
	}
	return g.Wait()
}

// offenceWait bounds how long CIPViolation waits for the node to open its
// blocknotify stream to an identity, and then to close the identity's three
// streams.
const offenceWait = 10 * time.Second

// offencePause is the pause between CIPViolation's identities: one offence
// a second, each counted on its own.
const offencePause = time.Second

// cipViolation runs identities one after another; each serves the node's
// three CIP streams and, as soon as the node opens its blocknotify stream,
// commits one offence on it: it sends the client's own message, a request
// for more, which no state of the stream lets a server send — a message
// out of turn, whatever the node's client has granted, where an offer of
// an EB never announced is not one (its announcement may yet come on the
// announce stream). The node counts it once and closes the identity's
// announce and votes streams with it, which the attack counts as siblings
// closed.
func cipViolation(ctx context.Context, t Target, tally *Tally) error {
	var handlers sync.WaitGroup
	defer handlers.Wait()
	offence, err := frames(&notify.MsgLeiosRequestNext{N: notify.GrantSize})
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		_ = offendOnce(ctx, t, tally, &handlers, offence)
		if !pause.For(ctx, offencePause) {
			return nil
		}
	}
	return nil
}

// offendOnce is one identity of cipViolation: offence is the frame it
// sends out of turn on blocknotify.
func offendOnce(ctx context.Context, t Target, tally *Tally, handlers *sync.WaitGroup, offence []byte) error {
	idCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// ended: each stream's handler returned (the node closed it).
	ended := map[string]*signal{"announce": newSignal(), "votes": newSignal(), "blocknotify": newSignal()}
	offended := newSignal()
	hold := func(name string) func(context.Context, *protocol.Session) error {
		return func(ctx context.Context, s *protocol.Session) error {
			defer ended[name].fire()
			return holdGrants(ctx, s)
		}
	}
	serve := cipHandlers(idCtx, tally, handlers,
		cipServer{notify.AnnounceSpec(), hold("announce")},
		cipServer{notify.VotesSpec(), hold("votes")})
	// blocknotify is served raw: the node's own session would refuse to
	// send the offence. One offence an identity: a stream the node's
	// client opens again after it is only held.
	var once sync.Once
	serve[libp2pprotocol.ID(notify.BlockNotifySpec().ID())] = func(st p2pnetwork.Stream) {
		handlers.Add(1)
		defer handlers.Done()
		defer ended["blocknotify"].fire()
		defer func() { _ = st.Reset() }()
		tally.Streams.Add(1)
		once.Do(func() {
			if _, err := st.Write(offence); err == nil {
				offended.fire()
			}
		})
		_, _ = io.Copy(io.Discard, st) // the node's grants, until it closes the stream
	}
	h, err := identity(idCtx, t, tally, serve)
	if err != nil {
		return err
	}
	defer func() { _ = h.Close() }()
	wait := time.NewTimer(offenceWait)
	defer wait.Stop()
	select {
	case <-offended.c:
	case <-wait.C:
		tally.Failed.Add(1)
		return errors.New("hostile: the node opened no blocknotify stream")
	case <-ctx.Done():
		return ctx.Err()
	}
	tally.Offences.Add(1)
	wait.Reset(offenceWait)
	for _, name := range []string{"blocknotify", "announce", "votes"} {
		select {
		case <-ended[name].c:
		case <-wait.C:
			return nil // the siblings stayed open
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	tally.SiblingsClosed.Add(1)
	return nil
}

// signal is a channel closed once, by the first of any number of fires:
// a stream kind may be served again (the node's client reopens it) after
// its first handler fired.
type signal struct {
	once sync.Once
	c    chan struct{}
}

func newSignal() *signal { return &signal{c: make(chan struct{})} }

func (s *signal) fire() { s.once.Do(func() { close(s.c) }) }
