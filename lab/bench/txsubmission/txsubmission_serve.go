package txsubmission

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/lab/bench/txchains"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/txsubmission"
	"github.com/leiosnode/leiosnode/node"
)

// The two ways of serving a mempool to tx submission.
const (
	tsLockFree = "lock-free"     // the node's: snapshot walks by ticket, no lock per tx
	tsPerItem  = "lock-per-item" // the seed's bug: a shared lock taken for every tx walked
)

// lockPerItem serves the same mempool the way the seed's broadcast did, the
// bug its fix removed: a peer's walk goes through the txs the mempool
// holds, oldest first, and checks each against a dedup cache shared by all
// peers — which peers each tx went to — under the cache's mutex (the
// filter), then takes the mutex again to record each tx it keeps (the
// consume loop). Every walk passes every tx held, one lock a tx, and all
// peers' walks and the add path (which enters each new tx) share the one
// mutex. A tx asked for is looked up under it too. The txs served are the
// lock-free walk's; only the work and the locking differ.
type lockPerItem struct {
	txsubmission.Mempool // the node's adapter: Lookup, Has, AddTxs, …
	pool                 *mempool.Mempool
	peer                 int // this walk's bit in the cache
	cache                *dedupCache
}

// dedupCache is the cache all peers' walks share.
type dedupCache struct {
	mu   sync.Mutex
	sent map[block.Hash]peerSet // guarded by mu
}

// peerSet has a bit per peer, for up to tsMaxPeers.
type peerSet [tsMaxPeers / 64]uint64

const tsMaxPeers = 256

func (b lockPerItem) TxsAfter(out []txsubmission.MempoolTx, after uint64, max int) []txsubmission.MempoolTx {
	word, bit := b.peer/64, uint64(1)<<(b.peer%64)
	max += len(out)
	for e := range b.pool.Snapshot().All() {
		if len(out) == max {
			break
		}
		h := e.Tx.Hash()
		b.cache.mu.Lock()
		sent := b.cache.sent[h][word]&bit != 0
		b.cache.mu.Unlock()
		if sent || e.Ticket <= after {
			continue
		}
		b.cache.mu.Lock()
		peers := b.cache.sent[h]
		peers[word] |= bit
		b.cache.sent[h] = peers
		b.cache.mu.Unlock()
		out = append(out, txsubmission.MempoolTx{Ticket: e.Ticket, Hash: h, Bytes: e.Tx.Bytes(), Size: e.Tx.Size()})
	}
	return out
}

func (b lockPerItem) Lookup(hash block.Hash) ([]byte, bool) {
	b.cache.mu.Lock()
	defer b.cache.mu.Unlock()
	return b.Mempool.Lookup(hash)
}

// admitted enters a new tx in the cache: the add path's lock.
func (c *dedupCache) admitted(hash block.Hash) {
	c.mu.Lock()
	c.sent[hash] = peerSet{}
	c.mu.Unlock()
}

// sentToAll enters a tx already sent to every peer: the seed's pool was
// mostly such txs, which every walk still passed, a lock each.
func (c *dedupCache) sentToAll(hash block.Hash) {
	var all peerSet
	for i := range all {
		all[i] = ^uint64(0)
	}
	c.mu.Lock()
	c.sent[hash] = all
	c.mu.Unlock()
}

// forget drops txs that left the mempool.
func (c *dedupCache) forget(hashes []block.Hash) {
	c.mu.Lock()
	for _, h := range hashes {
		delete(c.sent, h)
	}
	c.mu.Unlock()
}

// tsLoad is what a cell adds: added by the paced adder, held put in the
// mempool before the cell starts and never taken by a block.
type tsLoad struct {
	chains *txchains.Chains
	added  []*ledger.Tx
	held   []*ledger.Tx
}

// The chains of a run: the adder's, then the held txs'.
const (
	tsAdderChains = 100
	tsHeldChains  = 40
)

// heldTxs are n txs from the held chains, each chain's from its first on
// (so they extend the genesis state).
func heldTxs(c *txchains.Chains, n int) []*ledger.Tx {
	var held []*ledger.Tx
	per := (n + tsHeldChains - 1) / tsHeldChains
	for i := tsAdderChains; i < len(c.Txs) && len(held) < n; i++ {
		held = append(held, c.Txs[i][:min(per, n-len(held))]...)
	}
	return held
}

// peerSink is a pulling peer's side: its tx-submission server adds what it
// pulls here. The peers are the load, not what is measured, so they keep
// what they get in a set instead of validating it again.
type peerSink struct {
	mu       sync.Mutex
	held     map[block.Hash]struct{}
	received atomic.Int64
	known    atomic.Int64  // ids offered that it held already
	changed  chan struct{} // never closed: a peer serves nothing back
}

// newPeerSink returns a peer holding the txs of has already.
func newPeerSink(has []*ledger.Tx) *peerSink {
	p := &peerSink{held: make(map[block.Hash]struct{}, len(has)), changed: make(chan struct{})}
	for _, tx := range has {
		p.held[block.Hash(tx.Hash())] = struct{}{}
	}
	return p
}

func (p *peerSink) TxsAfter(dst []txsubmission.MempoolTx, _ uint64, _ int) []txsubmission.MempoolTx {
	return dst
}
func (p *peerSink) Lookup(block.Hash) ([]byte, bool) { return nil, false }
func (p *peerSink) RecentlyRejected(block.Hash) bool { return false }
func (p *peerSink) Changed() <-chan struct{}         { return p.changed }

func (p *peerSink) Has(hash block.Hash) bool {
	p.mu.Lock()
	_, ok := p.held[hash]
	p.mu.Unlock()
	if ok {
		p.known.Add(1)
	}
	return ok
}

func (p *peerSink) AddTxs(_ context.Context, txs [][]byte) []error {
	p.mu.Lock()
	for _, tx := range txs {
		p.held[block.HashBytes(tx)] = struct{}{}
	}
	p.mu.Unlock()
	p.received.Add(int64(len(txs)))
	return make([]error, len(txs))
}

// tcpStream is a loopback TCP connection as a protocol stream.
type tcpStream struct{ *net.TCPConn }

func (s tcpStream) Reset() error {
	_ = s.SetLinger(0)
	return s.Close()
}

// tsCell is one run: the node's mempool fed at a rate, served to peers
// pulling over loopback TCP.
type tsCell struct {
	Variant    string `json:"variant"`
	OfferedTxS int    `json:"offered_tx_s"`
	Peers      int    `json:"peers"`
	// Added are the txs the local adder got into the mempool during the
	// measured window; Served the txs all peers received in it.
	Added       int64   `json:"added"`
	Served      int64   `json:"served"`
	ServedTxS   float64 `json:"served_tx_s"`
	ServedShare float64 `json:"served_share"` // of offered × peers
	// HeldOfferedNs is when every peer had been offered every held tx
	// (lock-free; the lock-per-item walk has them as sent already), from
	// the cell's start; the window opens after it and the warm-up.
	HeldOfferedNs int64   `json:"held_offered_ns"`
	WindowNs      int64   `json:"window_ns"`
	CPUNs         int64   `json:"cpu_ns"`           // the process's, in the window
	CPUPerServeNs float64 `json:"cpu_per_serve_ns"` // CPUNs / Served
	// NetCPUPerServeNs leaves out what the adds alone cost (the no-peer
	// cell's CPU per add, times Added): the serving cost per tx served.
	NetCPUPerServeNs float64 `json:"net_cpu_per_serve_ns,omitempty"`
	AddP50Ns         int64   `json:"add_p50_ns"`
	AddP99Ns         int64   `json:"add_p99_ns"`
	AddMaxNs         int64   `json:"add_max_ns"`
	Violations       int     `json:"violations"`
}

// runTSCell feeds a fresh mempool holding load.held at offered tx/s for d
// and serves it to peers through variant, a block taking all the adder
// added every blockEvery; CPU and served txs are counted from after a
// warm-up that lets every session open and every peer be offered the held
// txs.
func runTSCell(ctx context.Context, variant string, load tsLoad, offered, peers int, d, warmUp, blockEvery time.Duration) (tsCell, error) {
	led := txchains.NewLedger(load.chains, &txchains.Costs{})
	pool, err := mempool.New(mempool.Options{TipLedger: led.TipLedger})
	if err != nil {
		return tsCell{}, err
	}
	defer pool.Close()
	adapter := node.TxSubmissionMempool(pool)
	serve := func(int) txsubmission.Mempool { return adapter }
	// admitted enters a tx in the baseline's cache before the add (its add
	// path's lock), heldAdmitted a held tx as sent to every peer; forget
	// drops the txs a block took. heldToOffer is how many held txs each
	// peer is offered before the window.
	admitted, heldAdmitted, forget := func(block.Hash) {}, func(block.Hash) {}, func([]block.Hash) {}
	heldToOffer := int64(len(load.held))
	if variant == tsPerItem {
		cache := &dedupCache{sent: map[block.Hash]peerSet{}}
		serve = func(peer int) txsubmission.Mempool {
			return lockPerItem{Mempool: adapter, pool: pool, peer: peer, cache: cache}
		}
		admitted, heldAdmitted, forget = cache.admitted, cache.sentToAll, cache.forget
		heldToOffer = 0
	}
	held := make(map[[32]byte]bool, len(load.held))
	for _, tx := range load.held {
		heldAdmitted(tx.Hash())
		if err := pool.Add(ctx, tx); err != nil {
			return tsCell{}, fmt.Errorf("adding the held txs: %w", err)
		}
		held[tx.Hash()] = true
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	var violations atomic.Int64
	sinks, closeSessions, err := connectPeers(gctx, g, serve, peers, load.held, &violations)
	if err != nil {
		cancel()
		_ = g.Wait()
		return tsCell{}, err
	}
	defer closeSessions()

	txs := load.added
	var latencies []time.Duration // of the adds in the window; the adder's until addsDone
	var measuring atomic.Bool
	var added atomic.Int64
	addsDone := make(chan struct{})
	start := time.Now()
	g.Go(func() error {
		defer close(addsDone)
		for i := 0; i < len(txs); {
			due := min(int(time.Since(start).Seconds()*float64(offered)), len(txs))
			for ; i < due; i++ {
				t0 := time.Now()
				admitted(txs[i].Hash())
				err := pool.Add(gctx, txs[i])
				if measuring.Load() {
					latencies = append(latencies, time.Since(t0))
				}
				if err != nil {
					if gctx.Err() != nil {
						return nil
					}
					return fmt.Errorf("add: %w", err)
				}
				added.Add(1)
			}
			if !txchains.SleepUntil(gctx, time.Now().Add(time.Millisecond)) {
				return nil
			}
		}
		return errors.New("the adder ran out of txs")
	})

	// Blocks drain the mempool, as the chain does: every blockEvery, all
	// the adder added goes on chain and the mempool syncs.
	g.Go(func() error {
		for next := start.Add(blockEvery); txchains.SleepUntil(gctx, next); next = next.Add(blockEvery) {
			var onChain []*ledger.Tx
			for tx := range pool.Txs() {
				if !held[tx.Hash()] {
					onChain = append(onChain, tx)
				}
			}
			if err := led.Adopt(onChain); err != nil {
				return err
			}
			r, err := pool.Sync(gctx)
			if err != nil {
				if gctx.Err() != nil {
					return nil
				}
				return err
			}
			forget(r.Dropped)
		}
		return nil
	})

	cell := tsCell{Variant: variant, OfferedTxS: offered, Peers: peers}
	served := func() int64 {
		n := int64(0)
		for _, s := range sinks {
			n += s.received.Load()
		}
		return n
	}
	stop := func() error {
		cancel()
		closeSessions()
		<-addsDone
		if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return ctx.Err()
	}
	heldOffered := func() bool {
		for _, s := range sinks {
			if s.known.Load() < heldToOffer {
				return false
			}
		}
		return true
	}
	for !heldOffered() {
		if !txchains.SleepUntil(gctx, time.Now().Add(10*time.Millisecond)) {
			return tsCell{}, errors.Join(errors.New("stopped before every peer was offered the held txs"), stop())
		}
	}
	cell.HeldOfferedNs = int64(time.Since(start))
	if !txchains.SleepUntil(gctx, start.Add(warmUp)) {
		return tsCell{}, errors.Join(errors.New("stopped before the window"), stop())
	}
	cpu0, _ := cpuwork.ProcessTime()
	measuring.Store(true)
	t0, served0, added0 := time.Now(), served(), added.Load()
	if !txchains.SleepUntil(gctx, t0.Add(d)) {
		return tsCell{}, errors.Join(errors.New("stopped in the window"), stop())
	}
	cpu1, _ := cpuwork.ProcessTime()
	measuring.Store(false)
	cell.WindowNs = int64(time.Since(t0))
	cell.Served, cell.Added = served()-served0, added.Load()-added0
	if err := stop(); err != nil && !errors.Is(err, context.Canceled) {
		return tsCell{}, err
	}
	cell.CPUNs = int64(cpu1 - cpu0)
	cell.ServedTxS = float64(cell.Served) / time.Duration(cell.WindowNs).Seconds()
	if peers > 0 {
		cell.ServedShare = cell.ServedTxS / float64(offered*peers)
		cell.CPUPerServeNs = float64(cell.CPUNs) / float64(max(cell.Served, 1))
	}
	slices.Sort(latencies)
	if n := len(latencies); n > 0 {
		cell.AddP50Ns, cell.AddP99Ns, cell.AddMaxNs = int64(latencies[n/2]), int64(latencies[n*99/100]), int64(latencies[n-1])
	}
	cell.Violations = int(violations.Load())
	return cell, nil
}

// connectPeers opens one loopback TCP connection per peer and runs tx
// submission over each: the node's real client serving serve(peer) on the
// end it dialed, a peer's real server pulling into a sink on the end it accepted.
// Each peer holds the txs of has already. closeSessions ends them all.
func connectPeers(ctx context.Context, g *errgroup.Group, serve func(peer int) txsubmission.Mempool, peers int, has []*ledger.Tx, violations *atomic.Int64) (sinks []*peerSink, closeSessions func(), err error) {
	var sessions []*protocol.Session
	var once sync.Once
	closeSessions = func() {
		once.Do(func() {
			for _, s := range sessions {
				s.Close()
			}
		})
	}
	if peers == 0 {
		return nil, closeSessions, nil
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, closeSessions, err
	}
	defer ln.Close()
	spec := txsubmission.Spec()
	onViolation := func(error) { violations.Add(1) }
	for peer := range peers {
		client := txsubmission.NewClient(serve(peer), txsubmission.Options{})
		nodeEnd, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
		if err != nil {
			closeSessions()
			return nil, closeSessions, err
		}
		peerEnd, err := ln.AcceptTCP()
		if err != nil {
			_ = nodeEnd.Close()
			closeSessions()
			return nil, closeSessions, err
		}
		sink := newPeerSink(has)
		sinks = append(sinks, sink)
		ns := protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Client, Stream: tcpStream{nodeEnd}, OnViolation: onViolation})
		ps := protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Server, Stream: tcpStream{peerEnd}, OnViolation: onViolation})
		sessions = append(sessions, ns, ps)
		server := txsubmission.NewServer(sink, txsubmission.Options{})
		g.Go(func() error { _ = client.Run(ns.Context(), ns); return nil })
		g.Go(func() error { _ = server.Serve(ps.Context(), ps); return nil })
	}
	return sinks, closeSessions, nil
}

// txsForRun is the txs one cell may add: offered tx/s over the warm-up and
// the window, and a margin.
func txsForRun(offered int, d, warmUp time.Duration) int {
	return int(float64(offered)*(d+warmUp).Seconds()*1.2) + 100
}
