package chainsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Violations found by the client.
var (
	ErrBrokenChain     = protocol.NewViolation("chainsync: header does not extend the previous one")
	ErrInvalidHeader   = protocol.NewViolation("chainsync: invalid header")
	ErrInvalidBlock    = protocol.NewViolation("chainsync: invalid block")
	ErrBadIntersection = protocol.NewViolation("chainsync: intersection is not one of the offered points")
)

// ErrNoIntersection means the peer shares not even the origin with us (a
// different network). It is not a violation.
var ErrNoIntersection = errors.New("chainsync: no common point with the peer")

// DefaultBatchSize is how many blocks a client fetches in one request while
// it is behind.
const DefaultBatchSize = 100

// Client syncs a LocalChain from one peer.
type Client struct {
	Chain LocalChain
	// ValidateHeader checks a header before its body is fetched (signature,
	// VRF) and returns the verdict, with no side effects; nil accepts every
	// header.
	ValidateHeader func(*block.Header) error
	// OnValidHeader, if set, is called with each header that extends the
	// followed chain and passed ValidateHeader, before its body is fetched:
	// what the node does with a header it accepted (such as relaying the EB
	// announcement it carries) is its own, not part of the verdict.
	OnValidHeader func(*block.Header)
	// Fetch returns the blocks from..to (inclusive) of the same peer's chain,
	// checked against each other and their headers: blockfetch's
	// Client.Fetch.
	Fetch func(ctx context.Context, from, to block.Point) ([]*block.Block, error)
	// IsInvalidBlock reports whether an AddBlock error means the block
	// itself is invalid (the peer's fault) rather than a local failure; nil
	// counts every AddBlock error against the peer.
	IsInvalidBlock func(error) bool
	// BatchSize bounds one fetch while behind; 0 means DefaultBatchSize.
	BatchSize int
	// OnCaughtUp, if set, is called each time the client has added
	// everything up to the peer's tip (the peer said await).
	OnCaughtUp func()
	// IsForkTooDeep reports whether an AddBlock error means the block
	// forks off before the local immutable tip: a deep fork, which is
	// nobody's fault. Nil: the client finds deep forks by the headers
	// alone.
	IsForkTooDeep func(error) bool
	// OnFork, if set, is told what the client found of the peer's chain:
	// a deep fork, or (nil) a chain that joins ours.
	OnFork func(*DeepFork)
	// ForkRecheck is how long the client waits, on a deep fork, before it
	// asks for an intersection again. Default DefaultForkRecheck.
	ForkRecheck time.Duration
}

// Run intersects with the peer and follows its chain until ctx ends or the
// session fails. On a chain that forks from ours deeper than k it follows
// nothing: it tells OnFork and intersects again after ForkRecheck (or, if
// the server holds agency then, returns the DeepFork for a new session to
// do so).
func (c *Client) Run(ctx context.Context, s *protocol.Session) error {
	for {
		err := c.sync(ctx, s)
		var fork *DeepFork
		if !errors.As(err, &fork) {
			return err
		}
		if c.OnFork != nil {
			c.OnFork(fork)
		}
		if s.State() != StIdle {
			return err
		}
		recheck := c.ForkRecheck
		if recheck <= 0 {
			recheck = DefaultForkRecheck
		}
		t := time.NewTimer(recheck)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// sync intersects with the peer and follows its chain.
func (c *Client) sync(ctx context.Context, s *protocol.Session) error {
	points, err := IntersectPoints(c.Chain)
	if err != nil {
		return err
	}
	cur, err := c.intersect(ctx, s, points)
	if err != nil {
		return err
	}
	if c.OnFork != nil {
		c.OnFork(nil)
	}
	f := follow{Client: c, s: s, cur: cur}
	for {
		if err := s.Send(&MsgRequestNext{}); err != nil {
			return err
		}
		msg, err := s.Recv(ctx)
		if err != nil {
			return err
		}
		if _, ok := msg.(*MsgAwaitReply); ok {
			// At the peer's tip: add what is pending before waiting.
			if err := f.flush(ctx); err != nil {
				return err
			}
			if c.OnCaughtUp != nil {
				c.OnCaughtUp()
			}
			if msg, err = s.Recv(ctx); err != nil {
				return err
			}
		}
		switch m := msg.(type) {
		case *MsgRollForward:
			err = f.rollForward(ctx, m.Header, m.Tip)
		case *MsgRollBackward:
			f.peerTip = m.Tip
			f.rollBackward(m.Point)
		default:
			err = fmt.Errorf("chainsync: client got %T", msg) // the Spec rules it out
		}
		if err != nil {
			return err
		}
	}
}

func (c *Client) intersect(ctx context.Context, s *protocol.Session, points []block.Point) (block.Point, error) {
	if err := s.Send(&MsgFindIntersect{Points: points}); err != nil {
		return block.Point{}, err
	}
	msg, err := s.Recv(ctx)
	if err != nil {
		return block.Point{}, err
	}
	switch m := msg.(type) {
	case *MsgIntersectFound:
		if !slices.Contains(points, m.Point) {
			return block.Point{}, s.Fail(fmt.Errorf("%w: %s", ErrBadIntersection, m.Point))
		}
		// Our points reach down to our immutable tip, then the origin. If
		// the peer's chain holds only the origin of them, and its tip is
		// not on our chain, it forks from ours below our immutable tip.
		if m.Point.IsOrigin() && !c.Chain.ImmutableTip().Point.IsOrigin() && !c.onOurChain(m.Tip) {
			return block.Point{}, c.deepFork(m.Tip)
		}
		return m.Point, nil
	case *MsgIntersectNotFound:
		return block.Point{}, fmt.Errorf("%w (peer tip %s)", ErrNoIntersection, m.Tip)
	default:
		return block.Point{}, fmt.Errorf("chainsync: client got %T", msg) // the Spec rules it out
	}
}

// IntersectPoints lists the points a client offers to find an intersection:
// the tip, then blocks exponentially further back (1, 2, 4, ... blocks) while
// above the immutable tip, then the immutable tip, then the origin.
func IntersectPoints(chain LocalChain) ([]block.Point, error) {
	tip, immutable := chain.Tip(), chain.ImmutableTip()
	var points []block.Point
	for back := uint64(0); tip.BlockNumber > immutable.BlockNumber+back; back = max(1, 2*back) {
		b, err := chain.BlockByNumber(tip.BlockNumber - back)
		if err != nil {
			return nil, fmt.Errorf("chainsync: intersect points: block %d: %w", tip.BlockNumber-back, err)
		}
		points = append(points, b.Point())
	}
	if !immutable.Point.IsOrigin() {
		points = append(points, immutable.Point)
	}
	return append(points, block.Origin), nil
}

// onOurChain reports whether the block of tip is on our selected chain.
func (c *Client) onOurChain(tip block.Tip) bool {
	if tip.Point.IsOrigin() {
		return true
	}
	b, err := c.Chain.BlockByNumber(tip.BlockNumber)
	return err == nil && b.Point() == tip.Point
}

// deepFork is the DeepFork of a peer whose tip is theirs.
func (c *Client) deepFork(theirs block.Tip) *DeepFork {
	return &DeepFork{Ours: c.Chain.Tip(), Immutable: c.Chain.ImmutableTip(), Theirs: theirs}
}

// follow is the client's view of the peer's chain: the point it has reached
// and the headers whose blocks are not fetched yet.
type follow struct {
	*Client
	s       *protocol.Session
	cur     block.Point
	pending []*block.Header // extend the chain up to cur, oldest first
	peerTip block.Tip       // as the peer's last roll said
}

func (f *follow) rollForward(ctx context.Context, h *block.Header, tip block.Tip) error {
	f.peerTip = tip
	if h.Prev() != f.cur.Hash {
		return f.s.Fail(fmt.Errorf("%w: block %d has prev %s, expected %s", ErrBrokenChain, h.BlockNumber, h.Prev().Short(), f.cur))
	}
	// A header at or below our immutable tip that is not ours: the chain
	// forked before it (the peer rolled back that far, or our immutable
	// tip moved past the intersection).
	held := f.onOurChain(block.Tip{Point: h.Point(), BlockNumber: h.BlockNumber})
	if !held && h.BlockNumber <= f.Chain.ImmutableTip().BlockNumber {
		return f.deepFork(tip)
	}
	if f.ValidateHeader != nil {
		if err := f.ValidateHeader(h); err != nil {
			return f.s.Fail(fmt.Errorf("%w: block %d: %w", ErrInvalidHeader, h.BlockNumber, err))
		}
	}
	if f.OnValidHeader != nil {
		f.OnValidHeader(h)
	}
	f.cur = h.Point()
	if held && len(f.pending) == 0 {
		return nil // a block we have: a peer behind us, or our common prefix
	}
	f.pending = append(f.pending, h)
	batch := f.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	if len(f.pending) >= batch || h.BlockNumber >= tip.BlockNumber {
		return f.flush(ctx)
	}
	return nil
}

// rollBackward forgets the pending headers after p. Blocks already added
// stay in the local chain, whose chain selection decides about them. A roll
// backward to cur (the intersection, first thing after it; a keep-alive)
// changes nothing.
func (f *follow) rollBackward(p block.Point) {
	f.cur = p
	for i, h := range f.pending {
		if h.Point() == p {
			f.pending = f.pending[:i+1]
			return
		}
	}
	f.pending = f.pending[:0]
}

// flush fetches the pending headers' blocks and adds them to the chain.
func (f *follow) flush(ctx context.Context) error {
	if len(f.pending) == 0 {
		return nil
	}
	blocks, err := f.Fetch(ctx, f.pending[0].Point(), f.pending[len(f.pending)-1].Point())
	if err != nil {
		return err
	}
	if len(blocks) != len(f.pending) {
		return f.s.Fail(fmt.Errorf("%w: fetched %d blocks for %d headers", ErrBrokenChain, len(blocks), len(f.pending)))
	}
	for i, b := range blocks {
		if b.Hash() != f.pending[i].Hash() {
			return f.s.Fail(fmt.Errorf("%w: fetched block %d is not the announced one", ErrBrokenChain, b.Header.BlockNumber))
		}
		if err := f.Chain.AddBlock(b); err != nil {
			if f.IsForkTooDeep != nil && f.IsForkTooDeep(err) {
				return f.deepFork(f.peerTip)
			}
			if f.IsInvalidBlock == nil || f.IsInvalidBlock(err) {
				return f.s.Fail(fmt.Errorf("%w: %w", ErrInvalidBlock, err))
			}
			return fmt.Errorf("chainsync: adding block %d: %w", b.Header.BlockNumber, err)
		}
	}
	f.pending = f.pending[:0]
	return nil
}
