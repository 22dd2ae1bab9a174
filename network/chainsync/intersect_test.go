package chainsync_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// scriptedClient plays the client side by hand against a Server of chain.
type scriptedClient struct {
	t *testing.T
	s *protocol.Session
}

func serveScripted(t *testing.T, chain chainsync.Chain) scriptedClient {
	t.Helper()
	ctx := context.Background()
	client, server, _ := sessions(t, ctx, chainsync.Spec())
	served := make(chan error, 1)
	go func() { served <- (&chainsync.Server{Chain: chain}).Serve(server.Context(), server) }()
	t.Cleanup(func() {
		if t.Failed() {
			client.Close() // the script broke off: the server may hold agency
			<-served
			return
		}
		if err := client.Send(&chainsync.MsgDone{}); err != nil {
			t.Errorf("done: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("server ended with %v", err)
		}
	})
	return scriptedClient{t, client}
}

// ask sends msg and returns the server's answer.
func (c scriptedClient) ask(msg protocol.Message) protocol.Message {
	c.t.Helper()
	if err := c.s.Send(msg); err != nil {
		c.t.Fatal(err)
	}
	answer, err := c.s.Recv(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	return answer
}

// wantRollBackward fails unless answer rolls back to p.
func (c scriptedClient) wantRollBackward(answer protocol.Message, p block.Point) {
	c.t.Helper()
	if m, ok := answer.(*chainsync.MsgRollBackward); !ok || m.Point != p {
		c.t.Fatalf("answer %#v, want a roll backward to %s", answer, p)
	}
}

// wantRollForward fails unless answer rolls forward to b's header.
func (c scriptedClient) wantRollForward(answer protocol.Message, b *block.Block) {
	c.t.Helper()
	if m, ok := answer.(*chainsync.MsgRollForward); !ok || m.Header.Hash() != b.Hash() {
		c.t.Fatalf("answer %#v, want a roll forward to block %d", answer, b.Header.BlockNumber)
	}
}

// TestServerRollsBackToTheIntersectionFirst: as Cardano's server does, the
// first request next after an intersection is answered with a roll
// backward to it, then the blocks after it roll forward; a new find
// intersect starts over; a session that finds none starts at the origin,
// rolled back to first as well.
func TestServerRollsBackToTheIntersectionFirst(t *testing.T) {
	blocks := chaintest.NewForger(1).Extend(nil, 5, "a")
	chain := chaintest.New(100)
	if err := chaintest.AddAll(chain, blocks); err != nil {
		t.Fatal(err)
	}
	tip := chain.Tip()

	t.Run("after an intersection", func(t *testing.T) {
		c := serveScripted(t, chain)
		found := c.ask(&chainsync.MsgFindIntersect{Points: []block.Point{{Slot: 999, Hash: block.Hash{9}}, blocks[2].Point()}})
		if m, ok := found.(*chainsync.MsgIntersectFound); !ok || m.Point != blocks[2].Point() || m.Tip != tip {
			t.Fatalf("answer %#v, want the intersection at block 3", found)
		}
		c.wantRollBackward(c.ask(&chainsync.MsgRequestNext{}), blocks[2].Point())
		c.wantRollForward(c.ask(&chainsync.MsgRequestNext{}), blocks[3])

		// A second intersection, further back: rolled back to first again.
		c.ask(&chainsync.MsgFindIntersect{Points: []block.Point{blocks[0].Point()}})
		c.wantRollBackward(c.ask(&chainsync.MsgRequestNext{}), blocks[0].Point())
		for _, b := range blocks[1:] {
			c.wantRollForward(c.ask(&chainsync.MsgRequestNext{}), b)
		}
	})
	t.Run("at the tip", func(t *testing.T) {
		c := serveScripted(t, chain)
		c.ask(&chainsync.MsgFindIntersect{Points: []block.Point{tip.Point}})
		c.wantRollBackward(c.ask(&chainsync.MsgRequestNext{}), tip.Point)
	})
	t.Run("without an intersection", func(t *testing.T) {
		c := serveScripted(t, chain)
		c.wantRollBackward(c.ask(&chainsync.MsgRequestNext{}), block.Origin)
		c.wantRollForward(c.ask(&chainsync.MsgRequestNext{}), blocks[0])
	})
	t.Run("an intersection not found changes nothing", func(t *testing.T) {
		c := serveScripted(t, chain)
		c.ask(&chainsync.MsgFindIntersect{Points: []block.Point{blocks[1].Point()}})
		c.wantRollBackward(c.ask(&chainsync.MsgRequestNext{}), blocks[1].Point())
		if m, ok := c.ask(&chainsync.MsgFindIntersect{Points: []block.Point{{Slot: 999, Hash: block.Hash{9}}}}).(*chainsync.MsgIntersectNotFound); !ok {
			t.Fatalf("answer %#v, want intersect not found", m)
		}
		c.wantRollForward(c.ask(&chainsync.MsgRequestNext{}), blocks[2])
	})
}

// TestClientFollowsBothServers: a scripted server plays Cardano's answer to
// the first request next (a roll backward to the intersection) or this
// node's older one (the next block at once). The client treats the roll
// backward as changing nothing: it fetches exactly the blocks it lacks, in
// one batch, and ends at the server's tip either way.
func TestClientFollowsBothServers(t *testing.T) {
	forger := chaintest.NewForger(1)
	blocks := forger.Extend(nil, 6, "a")
	remote := chaintest.New(100)
	if err := chaintest.AddAll(remote, blocks); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		rollBack bool
	}{{"Cardano: roll backward first", true}, {"older leiosnode: roll forward at once", false}} {
		t.Run(tc.name, func(t *testing.T) {
			local := chaintest.New(100)
			if err := chaintest.AddAll(local, blocks[:3]); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			client, server, violations := sessions(t, ctx, chainsync.Spec())
			tip := remote.Tip()
			served := make(chan error, 1)
			go func() {
				served <- func() error {
					msg, err := server.Recv(ctx)
					if err != nil {
						return err
					}
					points := msg.(*chainsync.MsgFindIntersect).Points
					if !slices.Contains(points, blocks[2].Point()) {
						return errors.New("the client did not offer its tip")
					}
					if err := server.Send(&chainsync.MsgIntersectFound{Point: blocks[2].Point(), Tip: tip}); err != nil {
						return err
					}
					var answers []protocol.Message
					if tc.rollBack {
						answers = append(answers, &chainsync.MsgRollBackward{Point: blocks[2].Point(), Tip: tip})
					}
					for _, b := range blocks[3:] {
						answers = append(answers, &chainsync.MsgRollForward{Header: b.Header, Tip: tip})
					}
					answers = append(answers, &chainsync.MsgAwaitReply{})
					for _, answer := range answers {
						if _, err := server.Recv(ctx); err != nil {
							return err
						}
						if err := server.Send(answer); err != nil {
							return err
						}
					}
					return nil
				}()
			}()
			var fetched [][2]block.Point
			caughtUp := make(chan struct{})
			c := &chainsync.Client{
				Chain:          local,
				ValidateHeader: chaintest.ValidateHeader,
				Fetch: func(_ context.Context, from, to block.Point) ([]*block.Block, error) {
					fetched = append(fetched, [2]block.Point{from, to})
					return remote.BlockRange(from, to)
				},
				OnCaughtUp: func() { close(caughtUp) },
			}
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx, client) }()
			select {
			case <-caughtUp:
			case err := <-done:
				t.Fatalf("client ended with %v", err)
			}
			if err := <-served; err != nil {
				t.Fatal(err)
			}
			cancel()
			<-done
			if local.Tip() != tip {
				t.Fatalf("client at %s, want %s", local.Tip(), tip)
			}
			if want := [][2]block.Point{{blocks[3].Point(), blocks[5].Point()}}; !slices.Equal(fetched, want) {
				t.Fatalf("fetched %v, want %v", fetched, want)
			}
			select {
			case err := <-violations:
				t.Fatalf("violation: %v", err)
			default:
			}
		})
	}
}
