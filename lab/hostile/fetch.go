package hostile

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/internal/pause"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// FetchUnread's size: identities under the 32 peers outside its topology a
// node lets dial in, each opening the streams a peer may open of each
// protocol (network.DefaultMaxStreams) and pipelining as many requests
// on each as the protocol lets a client (fetch.MaxPipelined+1).
const (
	unreadIdentities = 30
	unreadPipelined  = fetch.MaxPipelined + 1
)

// unreadFetch connects unreadIdentities identities; each opens its
// fetch/2, fetch/1 and block-fetch streams, asks on each fetch stream
// unreadPipelined times for the largest certified closures and on each
// block-fetch stream for the whole chain, and never reads. It holds them
// until ctx ends.
func unreadFetch(ctx context.Context, t Target, tally *Tally) error {
	if len(t.Closures) == 0 {
		return errors.New("hostile: no certified closure on the node's chain to ask for")
	}
	asks, err := unreadAsks(t)
	if err != nil {
		return err
	}
	hosts := make([]host.Host, unreadIdentities)
	defer func() {
		for _, h := range hosts {
			if h != nil {
				_ = h.Close()
			}
		}
	}()
	// Not errgroup.WithContext: one identity the node refused leaves the
	// others standing.
	var g errgroup.Group
	for i := range hosts {
		g.Go(func() error {
			h, err := identity(ctx, t, tally, nil)
			if err != nil {
				return nil // counted failed
			}
			hosts[i] = h
			for _, a := range asks {
				for range network.DefaultMaxStreams {
					st, err := h.NewStream(ctx, t.Peer.ID, libp2pprotocol.ID(a.spec.ID()))
					if err != nil {
						tally.Failed.Add(1)
						continue
					}
					tally.Streams.Add(1)
					// Written, never read: the node's answers wait on the
					// stream's window.
					if _, err := st.Write(a.frames); err != nil {
						tally.Failed.Add(1)
						continue
					}
					tally.Requests.Add(int64(a.requests))
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	<-ctx.Done()
	return nil
}

// unreadAsk is what FetchUnread writes on each stream of one protocol.
type unreadAsk struct {
	spec     *protocol.Spec
	frames   []byte
	requests int
}

// unreadAsks are FetchUnread's requests: on fetch/2 the two largest
// closures by EB hash, on fetch/1 the largest whole by point and bitmaps,
// each unreadPipelined times; on block fetch the chain from its first
// block to its tip.
func unreadAsks(t Target) ([]unreadAsk, error) {
	largest := t.Closures[:min(2, len(t.Closures))]
	hashes := make([]block.Hash, len(largest))
	for i, c := range largest {
		hashes[i] = c.Point.Hash
	}
	offsets := make([]int, largest[0].Txs)
	for i := range offsets {
		offsets[i] = i
	}
	bitmaps, err := fetch.BitmapsOf(offsets)
	if err != nil {
		return nil, fmt.Errorf("hostile: bitmaps of %d txs: %w", len(offsets), err)
	}
	var v2, v1 []protocol.Message
	for range unreadPipelined {
		v2 = append(v2, &fetch.MsgMultiBlockRequest{EbHashes: hashes})
		v1 = append(v1, &fetch.MsgBlockTxsRequest{Point: largest[0].Point, Bitmaps: bitmaps})
	}
	asks := []unreadAsk{
		{spec: fetch.Spec2(t.Limits), requests: len(v2)},
		{spec: fetch.Spec(t.Limits), requests: len(v1)},
		{spec: blockfetch.Spec(), requests: 1},
	}
	for i, msgs := range [][]protocol.Message{v2, v1, {&blockfetch.MsgRequestRange{From: t.First, To: t.Tip}}} {
		if asks[i].frames, err = frames(msgs...); err != nil {
			return nil, err
		}
	}
	return asks, nil
}

// notHeldIdentities is how many identities FetchNotHeld runs at once; each
// the node bans is replaced by a fresh one.
const notHeldIdentities = 4

// notHeldAnswerWait bounds how long a not-held request waits for the node
// to close its stream.
const notHeldAnswerWait = 5 * time.Second

// notHeld runs notHeldIdentities identities at once, each asking on its
// fetch/1 streams for EBs at the current slot under random hashes — EBs
// nobody holds — one request a stream, a new stream as soon as the node
// closes the last, until the node bans it; a fresh one then takes its
// place.
func notHeld(ctx context.Context, t Target, tally *Tally) error {
	spec := fetch.Spec(t.Limits)
	g, gctx := errgroup.WithContext(ctx)
	for range notHeldIdentities {
		g.Go(func() error {
			for gctx.Err() == nil {
				h, err := identity(gctx, t, tally, nil)
				if err != nil {
					if !pause.For(gctx, time.Second) {
						return nil
					}
					continue
				}
				var streams errgroup.Group
				for range network.DefaultMaxStreams {
					streams.Go(func() error { askNotHeld(gctx, h, t, spec, tally); return nil })
				}
				_ = streams.Wait()
				if gctx.Err() == nil {
					tally.Cut.Add(1)
				}
				_ = h.Close()
			}
			return nil
		})
	}
	return g.Wait()
}

// askNotHeld asks for EBs not held on stream after stream until the node
// no longer lets h open one (it cut or banned it) or ctx ends.
func askNotHeld(ctx context.Context, h host.Host, t Target, spec *protocol.Spec, tally *Tally) {
	for ctx.Err() == nil {
		st, err := h.NewStream(ctx, t.Peer.ID, libp2pprotocol.ID(spec.ID()))
		if err != nil {
			return
		}
		tally.Streams.Add(1)
		var hash block.Hash
		_, _ = rand.Read(hash[:])
		req, err := frames(&fetch.MsgBlockRequest{Point: block.Point{Slot: t.Slot(), Hash: hash}})
		if err != nil {
			_ = st.Reset()
			return
		}
		if _, err := st.Write(req); err != nil {
			_ = st.Reset()
			continue
		}
		tally.Requests.Add(1)
		// The node closes the stream on a request for data it does not
		// hold; what it may send first is read and dropped.
		_ = st.SetReadDeadline(time.Now().Add(notHeldAnswerWait))
		_, _ = io.Copy(io.Discard, st)
		_ = st.Reset()
	}
}
