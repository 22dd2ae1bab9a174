package leiosnet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/leiosdb"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/notify"
	"github.com/leiosnode/leiosnode/txcache"
)

// Node is one Leios node of a Network: its stores, its diffusion protocols
// and its host, wired as node.Node wires them.
type Node struct {
	Index   int
	DB      *leiosdb.DB
	Cache   *txcache.Cache
	Fetcher *fetch.Fetcher
	Relay   *notify.Relay
	Host    *network.Host

	closures *closureLog
}

// Publish puts eb through the node's shared handlers as its forge would
// (node.publishEB): the announcement (relayed to every peer, then into the
// LeiosDB and the cache), the body (its commit triggers the block offer),
// the closure txs as validated (their commit triggers the block-txs offer).
func (nd *Node) Publish(eb *EB) error {
	if err := nd.Relay.Announce(eb.Header); err != nil {
		return fmt.Errorf("leiosnet: node %d: announce: %w", nd.Index, err)
	}
	if err := nd.announcement(eb.Header); err != nil {
		return err
	}
	p := eb.Point()
	if err := nd.Fetcher.Body(p, eb.Body.Bytes()); err != nil {
		return fmt.Errorf("leiosnet: node %d: %w", nd.Index, err)
	}
	if err := nd.Fetcher.Txs(p, eb.Closure, true); err != nil {
		return fmt.Errorf("leiosnet: node %d: %w", nd.Index, err)
	}
	return nil
}

// announcement is node.ingestAnnouncement: an accepted header that
// announces an EB goes to the fetch logic (LeiosDB, then cache).
func (nd *Node) announcement(h *block.Header) error {
	if h.Announcement == nil {
		return nil
	}
	if err := nd.Fetcher.Announcement(h.Slot, h.Hash(), *h.Announcement); err != nil {
		return fmt.Errorf("leiosnet: node %d: announcement of %s: %w", nd.Index, h.Point(), err)
	}
	return nil
}

// ClosureTime is when the node first held the whole closure of p.
func (nd *Node) ClosureTime(p block.Point) (time.Time, bool) { return nd.closures.get(p) }

// FetchedBytes is the body and tx bytes the node received from peers and
// ingested, since it started.
func (nd *Node) FetchedBytes() uint64 { return nd.Fetcher.Stats().FetchedBytes }

// closureLog is when each point's closure became complete on one node.
type closureLog struct {
	mu      sync.Mutex // guards the fields below
	at      map[block.Point]time.Time
	changed chan struct{} // closed and replaced on every new record
}

func newClosureLog() *closureLog {
	return &closureLog{at: make(map[block.Point]time.Time), changed: make(chan struct{})}
}

func (l *closureLog) record(p block.Point, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.at[p]; ok {
		return
	}
	l.at[p] = t
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *closureLog) get(p block.Point) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.at[p]
	return t, ok
}

// await waits until p is recorded or ctx ends.
func (l *closureLog) await(ctx context.Context, p block.Point) (time.Time, error) {
	for {
		l.mu.Lock()
		t, ok := l.at[p]
		changed := l.changed
		l.mu.Unlock()
		if ok {
			return t, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-changed:
		}
	}
}

// follow records ClosureComplete events from events (a subscription taken
// before anything was published) until ctx ends. When the LeiosDB cuts a
// lagging subscription off, it subscribes again and takes the complete
// points it missed from the store, stamped with the time it learned them.
func (nd *Node) follow(ctx context.Context, events <-chan leiosdb.Event, cancel func()) error {
	for {
		for open := true; open; {
			select {
			case <-ctx.Done():
				cancel()
				return nil
			case ev, ok := <-events:
				if !ok {
					open = false
					break
				}
				if ev.Kind == leiosdb.ClosureComplete {
					nd.closures.record(ev.Point, time.Now())
				}
			}
		}
		cancel()
		events, cancel = nd.DB.Subscribe()
		infos, err := nd.DB.Points(0)
		if err != nil {
			cancel()
			return fmt.Errorf("leiosnet: node %d: catching up closures: %w", nd.Index, err)
		}
		now := time.Now()
		for _, info := range infos {
			if info.Complete() {
				nd.closures.record(info.Point, now)
			}
		}
	}
}
