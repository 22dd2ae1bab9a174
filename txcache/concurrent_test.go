package txcache

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/benchkeys"
)

// Readers look up txs while a writer announces, inserts, marks and evicts
// EBs, so insertions displace entries and deletions shift them back under
// the readers' feet. EB r holds the fresh txs of rounds r-1 and r; with four
// announcements held, EB r stays until round r+4. A reader that reads EB r
// and sees the writer still at most at round r+2 afterwards read txs present
// throughout: all must be held (no false miss from a torn probe). Keys never
// inserted must never hit.
func TestConcurrentLookupsWithWriter(t *testing.T) {
	// The writer runs until the readers have made enough checked reads
	// (bounded by maxRounds), so the race gets its chance on a slow machine.
	const maxRounds, targetReads = 50_000, 2_000
	for _, tc := range []struct {
		name     string
		capacity int
		fresh    int // new txs per round
		homeHook func(block.Hash) uint64
	}{
		{"seeded hash", 2048, 200, nil},
		// Homes packed around a stripe boundary: one long cluster, probes
		// that read two stripes, shifts that cross between them.
		{"cluster across a stripe boundary", 3 * stripeSize, 50, func(h block.Hash) uint64 {
			return stripeSize - 128 + (uint64(h[0])<<8|uint64(h[1]))%256
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Options{MaxAnnouncements: 4, TxCapacity: tc.capacity, homeHook: tc.homeHook})
			body := func(r int) []block.EBTx {
				return append(benchkeys.EBTxs(r-1, tc.fresh), benchkeys.EBTxs(r, tc.fresh)...)
			}
			absent := make([]block.Hash, 100)
			for i := range absent {
				absent[i] = benchkeys.MissKey(i)
			}

			var round atomic.Int64 // the last round the writer completed
			round.Store(-1)
			var done atomic.Bool
			var checked atomic.Int64
			g, ctx := errgroup.WithContext(context.Background())
			g.Go(func() error {
				defer done.Store(true)
				for r := 0; r < maxRounds && checked.Load() < targetReads && ctx.Err() == nil; r++ {
					txs := body(r)
					c.InsertAnnouncement(uint64(r), benchkeys.RBHash(r), benchkeys.EBHash(r))
					if _, err := c.InsertBody(benchkeys.EBHash(r), txs); err != nil {
						return err
					}
					c.MarkValidated(hashesOf(txs))
					if r%7 == 6 {
						c.EvictOlderThan(uint64(r - 3))
					}
					round.Store(int64(r))
				}
				return nil
			})
			for range 2 {
				g.Go(func() error {
					out := make([]TxState, 2*tc.fresh)
					for !done.Load() {
						r := int(round.Load())
						if r < 0 {
							continue
						}
						txs := body(r)
						held := c.LookupTxs(hashesOf(txs), out)
						missing := c.AppendMissing(nil, txs)
						if int(round.Load()) <= r+2 {
							if held != len(txs) || len(missing) != 0 {
								return fmt.Errorf("EB %d: %d of %d held, %d missing", r, held, len(txs), len(missing))
							}
							checked.Add(1)
						}
						if held := c.LookupTxs(absent, out); held != 0 {
							return fmt.Errorf("%d never-inserted txs held", held)
						}
						for i, s := range out[:len(absent)] {
							if s != TxAbsent {
								return fmt.Errorf("never-inserted tx %d is %s", i, s)
							}
						}
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			checkCache(t, c)
			if s := c.Stats(); s.RefusedInserts != 0 {
				t.Fatalf("test table too small: %+v", s)
			}
			t.Logf("%d rounds, %d checked reads", round.Load()+1, checked.Load())
			if checked.Load() == 0 {
				t.Fatal("no read overlapped the writer")
			}
		})
	}
}
