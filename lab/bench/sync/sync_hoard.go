package sync

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/lab/hostile"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// The hoarders phase: identities that ask node-0 by block fetch for the
// whole chain and never read hold what the node sends them; its heap must
// stay within a bound that does not grow with the chain. Then one client
// that reads pulls the chain as fast as the node serves it.

// hoardSpec is what the hoarders phase does.
type hoardSpec struct {
	identities int           // each a fresh libp2p identity
	window     time.Duration // how long they hold their streams
}

// hoardStreamsPerIdentity is how many block-fetch streams each hoarder
// opens: the most the node serves a peer (network.DefaultMaxStreams).
const hoardStreamsPerIdentity = 2

// Sampling of node-0's /metrics: once a second, for quiet before and
// after the hoard.
const (
	sampleInterval = time.Second
	quietSpan      = 5 * time.Second
)

// servedShare of the hoarders' streams node-0's gauge must show at least
// once: the streams were served, so the heap measured holds what they cost.
const servedShare = 0.9

// reader: one client that reads, pulling the whole chain again and again.
// Block fetch serves a peer two streams, so its four are two identities'.
const (
	readerIdentities = 2
	readerSpan       = 10 * time.Second
)

// runHoard runs the phase against node-0 of the sources. It fails if the
// node never served most of the hoarders' streams; a peak above the bound
// is in the report (Held), for the caller to fail on once it is written.
func runHoard(ctx context.Context, spec hoardSpec, chain *syncChain, sources *syncSources, client *http.Client, progress io.Writer) (*hoardReport, error) {
	node := sources.procs[0]
	target, err := peer.AddrInfoFromString(sources.peers[0])
	if err != nil {
		return nil, err
	}
	r := &hoardReport{
		Identities: spec.identities, Streams: hoardStreamsPerIdentity * spec.identities,
		WindowSeconds: spec.window.Seconds(), LargestBlockBytes: largestBlock(chain.blocks),
	}
	from, to := chain.blocks[0].Point(), chain.tip.Point
	s := &hoardSampler{node: node, client: client, start: time.Now(), report: r}

	fmt.Fprintf(progress, "sync: node-0's memory for %v, then %d identities hoard the chain on %d streams for %v...\n",
		quietSpan, r.Identities, r.Streams, spec.window)
	if err := s.sampleFor(ctx, "before", quietSpan); err != nil {
		return nil, err
	}
	hoarders, err := startHoarders(ctx, spec.identities, *target, from, to)
	if err != nil {
		return nil, err
	}
	err = s.sampleFor(ctx, "during", spec.window)
	hoarders.close()
	if err != nil {
		return nil, err
	}
	if err := s.sampleFor(ctx, "after", quietSpan); err != nil {
		return nil, err
	}
	r.summarize()
	if need := int(math.Ceil(servedShare * float64(r.Streams))); r.PeakServedStreams < need {
		return nil, fmt.Errorf("hoarders: node-0 served at most %d block-fetch streams of the %d opened (at least %d needed); its log is %s",
			r.PeakServedStreams, r.Streams, need, node.logFile)
	}

	fmt.Fprintf(progress, "sync: a reading client pulls the chain on %d streams for %v...\n", readerIdentities*hoardStreamsPerIdentity, readerSpan)
	if r.Reader, err = pullChain(ctx, *target, from, to, len(chain.blocks)); err != nil {
		return nil, fmt.Errorf("reading client: %w", err)
	}
	return r, nil
}

func largestBlock(blocks []*block.Block) int {
	largest := 0
	for _, b := range blocks {
		largest = max(largest, len(b.Bytes()))
	}
	return largest
}

// hoardSampler samples node-0's /metrics into a report.
type hoardSampler struct {
	node   *nodeProcess
	client *http.Client
	start  time.Time
	report *hoardReport
}

// sampleFor samples at once and every sampleInterval until d has passed.
func (s *hoardSampler) sampleFor(ctx context.Context, phase string, d time.Duration) error {
	end := time.Now().Add(d)
	tick := time.NewTicker(sampleInterval)
	defer tick.Stop()
	for {
		m, err := s.node.metrics(ctx, s.client)
		if err != nil {
			return fmt.Errorf("hoarders, %s: %w", phase, err)
		}
		s.report.GOGCPercent = m.gogcPercent
		s.report.Samples = append(s.report.Samples, hoardSample{
			Seconds: time.Since(s.start).Seconds(), Phase: phase,
			HeapBytes: m.heapInuse, LiveBytes: m.nextGC / (1 + m.gogcPercent/100), RSSBytes: m.rss,
			Served: int(m.servedBlockFetch),
		})
		if !time.Now().Add(sampleInterval).Before(end) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// hoarders are the identities and their sessions, none of which is read.
type hoarders struct {
	hosts    []host.Host
	sessions []*protocol.Session
}

// startHoarders connects n fresh identities to target, each of which
// opens hoardStreamsPerIdentity block-fetch streams and asks for from..to
// on each; it returns once every request is sent.
func startHoarders(ctx context.Context, n int, target peer.AddrInfo, from, to block.Point) (*hoarders, error) {
	h := &hoarders{hosts: make([]host.Host, n), sessions: make([]*protocol.Session, n*hoardStreamsPerIdentity)}
	// Not errgroup.WithContext: the sessions outlive the group.
	var g errgroup.Group
	for i := range n {
		g.Go(func() error {
			var err error
			if h.hosts[i], err = hostile.NewIdentity(); err != nil {
				return err
			}
			for j := range hoardStreamsPerIdentity {
				s, err := openBlockFetch(ctx, h.hosts[i], target, nil)
				if err != nil {
					return fmt.Errorf("hoarder %d: %w", i, err)
				}
				h.sessions[i*hoardStreamsPerIdentity+j] = s
				// Never received: the session's reader stops once its inbox
				// is full, and the node's send waits on the stream.
				if err := s.Send(&blockfetch.MsgRequestRange{From: from, To: to}); err != nil {
					return fmt.Errorf("hoarder %d: %w", i, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

func (h *hoarders) close() {
	for _, s := range h.sessions {
		if s != nil {
			s.Close()
		}
	}
	for _, c := range h.hosts {
		if c != nil {
			_ = c.Close()
		}
	}
}

// openBlockFetch connects c to target if it is not yet, and starts a
// block-fetch client session on a new stream; onMessage, if set, sees
// each message (protocol.Config.OnMessage).
func openBlockFetch(ctx context.Context, c host.Host, target peer.AddrInfo, onMessage func(protocol.Direction, protocol.Message, int)) (*protocol.Session, error) {
	if err := c.Connect(ctx, target); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", target.ID, err)
	}
	spec := blockfetch.Spec()
	st, err := c.NewStream(ctx, target.ID, libp2pprotocol.ID(spec.ID()))
	if err != nil {
		return nil, fmt.Errorf("opening block fetch: %w", err)
	}
	return protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Client, Stream: st, OnMessage: onMessage}), nil
}

// pullChain runs the reading client: readerIdentities identities, each on
// hoardStreamsPerIdentity streams, each stream asking for from..to again
// as soon as a batch is in, for readerSpan; it counts the bytes of the
// messages received.
func pullChain(ctx context.Context, target peer.AddrInfo, from, to block.Point, blocks int) (*readerRun, error) {
	received := make([]atomic.Uint64, readerIdentities)
	hosts := make([]host.Host, readerIdentities)
	defer func() {
		for _, c := range hosts {
			if c != nil {
				_ = c.Close()
			}
		}
	}()
	for i := range hosts {
		var err error
		if hosts[i], err = hostile.NewIdentity(); err != nil {
			return nil, err
		}
	}
	started := time.Now()
	pullCtx, stop := context.WithTimeout(ctx, readerSpan)
	defer stop()
	g, gctx := errgroup.WithContext(pullCtx)
	for i, c := range hosts {
		count := func(dir protocol.Direction, _ protocol.Message, size int) {
			if dir == protocol.Received {
				received[i].Add(uint64(size))
			}
		}
		for range hoardStreamsPerIdentity {
			g.Go(func() error {
				s, err := openBlockFetch(gctx, c, target, count)
				if err != nil {
					return err
				}
				defer s.Close()
				fetch := blockfetch.NewClient(s, blocks)
				for {
					if _, err := fetch.Fetch(gctx, from, to); err != nil {
						return err
					}
				}
			})
		}
	}
	err := g.Wait()
	if pullCtx.Err() == nil || ctx.Err() != nil {
		return nil, err // the pull ended before its span
	}
	// Counted before the clock is read: each byte counted was served
	// within Seconds.
	counted := make([]uint64, len(received))
	for i := range received {
		counted[i] = received[i].Load()
	}
	run := &readerRun{
		Identities: readerIdentities, Streams: readerIdentities * hoardStreamsPerIdentity,
		Seconds:       time.Since(started).Seconds(),
		BudgetPerPeer: network.DefaultServeBytesPerPeer, BudgetTotal: network.DefaultServeBytesTotal,
	}
	for _, n := range counted {
		run.Bytes += n
		run.MaxIdentityBytesPerSecond = max(run.MaxIdentityBytesPerSecond, float64(n)/run.Seconds)
	}
	run.BytesPerSecond = float64(run.Bytes) / run.Seconds
	return run, nil
}
