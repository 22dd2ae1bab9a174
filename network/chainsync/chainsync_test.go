package chainsync_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/chainsync"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sessions returns a client and a server session of spec over a pipe, and
// the client's violation.
func sessions(t *testing.T, ctx context.Context, spec *protocol.Spec) (client, server *protocol.Session, violations <-chan error) {
	t.Helper()
	client, server, violations, _ = protocoltest.Sessions(t, ctx, spec)
	return client, server, violations
}

// syncer runs a chain-sync client of local against a server of remote,
// with block fetch over a second stream, and records every fetch's size.
type syncer struct {
	mu      sync.Mutex
	fetches []int
}

func (sy *syncer) sizes() []int {
	sy.mu.Lock()
	defer sy.mu.Unlock()
	return slices.Clone(sy.fetches)
}

// syncToTip syncs local from remote, as run does, until the test ends or
// stop, and waits until local holds remote's tip.
func syncToTip(t *testing.T, local, remote *chaintest.Chain) (sy *syncer, done <-chan error, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sy = new(syncer)
	done = sy.run(t, ctx, local, remote, 100)
	t.Cleanup(cancel) // first: the client stops before the sessions close
	waitTip(t, local, remote.Tip(), done)
	return sy, done, cancel
}

func (sy *syncer) run(t *testing.T, ctx context.Context, local, remote *chaintest.Chain, batch int) <-chan error {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // after the sessions' cleanups, which end the servers
	cs, css, _ := sessions(t, ctx, chainsync.Spec())
	bf, bfs, _ := sessions(t, ctx, blockfetch.Spec())
	wg.Go(func() { _ = (&chainsync.Server{Chain: remote}).Serve(css.Context(), css) })
	wg.Go(func() {
		_ = (&blockfetch.Server{Blocks: blockfetch.FromSlices(remote.BlockRange)}).Serve(bfs.Context(), bfs)
	})
	fetcher := blockfetch.NewClient(bf, 0)
	client := &chainsync.Client{
		Chain:          local,
		ValidateHeader: chaintest.ValidateHeader,
		IsInvalidBlock: func(err error) bool { return errors.Is(err, chaintest.ErrInvalid) },
		BatchSize:      batch,
		Fetch: func(ctx context.Context, from, to block.Point) ([]*block.Block, error) {
			blocks, err := fetcher.Fetch(ctx, from, to)
			sy.mu.Lock()
			sy.fetches = append(sy.fetches, len(blocks))
			sy.mu.Unlock()
			return blocks, err
		},
	}
	done := make(chan error, 1)
	wg.Go(func() { done <- client.Run(ctx, cs) })
	return done
}

func waitTip(t *testing.T, local *chaintest.Chain, want block.Tip, done <-chan error) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for local.Tip() != want {
		select {
		case err := <-done:
			t.Fatalf("client ended at %s, want %s: %v", local.Tip(), want, err)
		case <-deadline:
			t.Fatalf("client at %s, want %s", local.Tip(), want)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestSpecValidates(t *testing.T) {
	if err := chainsync.Spec().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestCatchUpInBatchesThenFollow(t *testing.T) {
	forger := chaintest.NewForger(1)
	remote, local := chaintest.New(1000), chaintest.New(1000)
	blocks := forger.Extend(nil, 250, "a")
	if err := chaintest.AddAll(remote, blocks); err != nil {
		t.Fatal(err)
	}
	sy, done, stop := syncToTip(t, local, remote)
	if got := sy.sizes(); !slices.Equal(got, []int{100, 100, 50}) {
		t.Fatalf("fetches while behind: %v, want [100 100 50]", got)
	}

	// At the tip, each new block is fetched on its own.
	parent := blocks[len(blocks)-1]
	for _, b := range forger.Extend(parent, 3, "b") {
		if err := remote.AddBlock(b); err != nil {
			t.Fatal(err)
		}
		waitTip(t, local, remote.Tip(), done)
	}
	if got := sy.sizes(); !slices.Equal(got[3:], []int{1, 1, 1}) {
		t.Fatalf("fetches at the tip: %v, want [1 1 1]", got[3:])
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) && !errors.Is(err, protocol.ErrClosed) {
		t.Fatalf("client ended with %v", err)
	}
}

func TestForkSwitchesToLongerChain(t *testing.T) {
	forger := chaintest.NewForger(1)
	prefix := forger.Extend(nil, 5, "p")
	mine := forger.Extend(prefix[4], 3, "mine")
	theirs := forger.Extend(prefix[4], 6, "theirs")
	remote, local := chaintest.New(100), chaintest.New(100)
	for _, err := range []error{
		chaintest.AddAll(remote, prefix), chaintest.AddAll(remote, theirs),
		chaintest.AddAll(local, prefix), chaintest.AddAll(local, mine),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	sy, _, _ := syncToTip(t, local, remote)
	// The client offers blocks 8, 7, 6, 4 and origin: the intersection is
	// block 4; block 5 it holds, so it fetches the other branch's 6 blocks.
	if got := sy.sizes(); !slices.Equal(got, []int{6}) {
		t.Fatalf("fetches %v, want [6]", got)
	}
}

func TestFollowAcrossServerRollback(t *testing.T) {
	forger := chaintest.NewForger(1)
	main := forger.Extend(nil, 10, "main")
	remote, local := chaintest.New(100), chaintest.New(100)
	if err := chaintest.AddAll(remote, main); err != nil {
		t.Fatal(err)
	}
	_, done, _ := syncToTip(t, local, remote)

	// The server switches to a longer fork from block 7: its follower rolls
	// the client back, then forward on the fork.
	if err := chaintest.AddAll(remote, forger.Extend(main[6], 5, "fork")); err != nil {
		t.Fatal(err)
	}
	waitTip(t, local, remote.Tip(), done)
	if local.Tip().BlockNumber != 12 {
		t.Fatalf("tip %s, want block 12", local.Tip())
	}
}

func TestIntersectPoints(t *testing.T) {
	chain := chaintest.New(10)
	blocks := chaintest.NewForger(1).Extend(nil, 100, "a")
	if err := chaintest.AddAll(chain, blocks); err != nil {
		t.Fatal(err)
	}
	points, err := chainsync.IntersectPoints(chain)
	if err != nil {
		t.Fatal(err)
	}
	var want []block.Point
	for _, n := range []int{100, 99, 98, 96, 92, 90} { // tip, back 1, 2, 4, 8, immutable tip
		want = append(want, blocks[n-1].Point())
	}
	want = append(want, block.Origin)
	if !slices.Equal(points, want) {
		t.Fatalf("points %v, want %v", points, want)
	}

	empty, err := chainsync.IntersectPoints(chaintest.New(10))
	if err != nil || !slices.Equal(empty, []block.Point{block.Origin}) {
		t.Fatalf("empty chain: %v %v", empty, err)
	}
}

// badlySigned is a block whose header is signed by a key other than its
// issuer's.
func badlySigned(parent *block.Block, slot uint64) *block.Block {
	good := chaintest.NewForger(1).Block(parent, slot, "x")
	hb := good.Header.HeaderBody
	other := chaintest.NewForger(2).Key
	return block.NewBlock(block.NewHeader(hb, other), good.Body)
}

// TestClientViolations plays a misbehaving server by hand.
func TestClientViolations(t *testing.T) {
	forger := chaintest.NewForger(1)
	genesis := forger.Block(nil, 1, "g")
	unrelated := forger.Block(nil, 2, "u") // a first block that is not genesis
	for _, tc := range []struct {
		name  string
		serve func(s *protocol.Session) error // after the client's find intersect
		want  error
	}{
		{"intersection not offered", func(s *protocol.Session) error {
			return s.Send(&chainsync.MsgIntersectFound{Point: unrelated.Point(), Tip: block.Tip{Point: unrelated.Point(), BlockNumber: 1}})
		}, chainsync.ErrBadIntersection},
		{"header does not extend", func(s *protocol.Session) error {
			if err := s.Send(&chainsync.MsgIntersectFound{Point: block.Origin}); err != nil {
				return err
			}
			if _, err := s.Recv(context.Background()); err != nil {
				return err
			}
			second := forger.Block(genesis, 5, "second")
			return s.Send(&chainsync.MsgRollForward{Header: second.Header, Tip: block.Tip{Point: second.Point(), BlockNumber: 2}})
		}, chainsync.ErrBrokenChain},
		{"bad signature", func(s *protocol.Session) error {
			if err := s.Send(&chainsync.MsgIntersectFound{Point: block.Origin}); err != nil {
				return err
			}
			if _, err := s.Recv(context.Background()); err != nil {
				return err
			}
			bad := badlySigned(nil, 1)
			return s.Send(&chainsync.MsgRollForward{Header: bad.Header, Tip: block.Tip{Point: bad.Point(), BlockNumber: 1}})
		}, chainsync.ErrInvalidHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			client, server, violations := sessions(t, ctx, chainsync.Spec())
			served := make(chan error, 1)
			go func() {
				if _, err := server.Recv(ctx); err != nil {
					served <- err
					return
				}
				served <- tc.serve(server)
			}()
			c := &chainsync.Client{
				Chain:          chaintest.New(10),
				ValidateHeader: chaintest.ValidateHeader,
				Fetch: func(context.Context, block.Point, block.Point) ([]*block.Block, error) {
					t.Error("fetch after a violation")
					return nil, errors.New("unexpected fetch")
				},
			}
			if err := c.Run(ctx, client); !errors.Is(err, tc.want) {
				t.Fatalf("client ended with %v, want %v", err, tc.want)
			}
			if err := <-violations; !errors.Is(err, tc.want) {
				t.Fatalf("reported %v, want %v", err, tc.want)
			}
			<-served
		})
	}
}

func TestInvalidBlockIsAViolation(t *testing.T) {
	forger := chaintest.NewForger(1)
	blocks := forger.Extend(nil, 3, "a")
	remote := chaintest.New(100)
	if err := chaintest.AddAll(remote, blocks[:2]); err != nil {
		t.Fatal(err)
	}
	// Block 3 repeats block 2's slot: well-formed and signed, but invalid.
	bad := forger.Block(blocks[1], blocks[1].Header.Slot, "same slot")
	if err := remote.AddUnchecked(bad); err != nil {
		t.Fatal(err)
	}
	local := chaintest.New(100)
	ctx := context.Background()
	var sy syncer
	done := sy.run(t, ctx, local, remote, 100)
	if err := <-done; !errors.Is(err, chainsync.ErrInvalidBlock) || !errors.Is(err, chaintest.ErrInvalid) {
		t.Fatalf("client ended with %v, want an invalid block", err)
	}
	if local.Tip().BlockNumber != 2 {
		t.Fatalf("tip %s, want the 2 valid blocks", local.Tip())
	}
}

// TestOnValidHeaderSeesOnlyValidatedHeaders: the hook gets each header that
// passed ValidateHeader, in order, and never one that failed it.
func TestOnValidHeaderSeesOnlyValidatedHeaders(t *testing.T) {
	forger := chaintest.NewForger(1)
	blocks := forger.Extend(nil, 3, "a")
	remote := chaintest.New(100)
	if err := chaintest.AddAll(remote, blocks); err != nil {
		t.Fatal(err)
	}
	if err := remote.AddUnchecked(badlySigned(blocks[2], blocks[2].Header.Slot+1)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	client, server, _ := sessions(t, ctx, chainsync.Spec())
	served := make(chan error, 1)
	go func() { served <- (&chainsync.Server{Chain: remote}).Serve(server.Context(), server) }()
	var seen []block.Point
	c := &chainsync.Client{
		Chain:          chaintest.New(100),
		ValidateHeader: chaintest.ValidateHeader,
		OnValidHeader:  func(h *block.Header) { seen = append(seen, h.Point()) },
		Fetch: func(context.Context, block.Point, block.Point) ([]*block.Block, error) {
			return nil, errors.New("no fetch before the tip")
		},
	}
	if err := c.Run(ctx, client); !errors.Is(err, chainsync.ErrInvalidHeader) {
		t.Fatalf("client ended with %v, want an invalid header", err)
	}
	want := []block.Point{blocks[0].Point(), blocks[1].Point(), blocks[2].Point()}
	if !slices.Equal(seen, want) {
		t.Fatalf("OnValidHeader saw %v, want %v", seen, want)
	}
	<-served
}
