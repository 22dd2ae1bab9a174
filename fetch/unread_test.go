package fetch

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// fullClosure is an EB whose closure is full: 750 txs of 16 kB, 12 MB.
func fullClosure(tb testing.TB, first uint64) *blocktest.EB {
	tb.Helper()
	const txSize = 16_000
	return blocktest.NewEB(tb, txSize, blocktest.Seeds(first, first+uint64(testLimits.MaxClosureBytes/txSize))...)
}

// rawHost is a bare libp2p host with a fresh identity: a peer that
// speaks the wire by hand. It is closed when the test ends.
func rawHost(t *testing.T) host.Host {
	t.Helper()
	h, err := libp2p.New(
		libp2p.RandomIdentity,
		libp2p.NoListenAddrs,
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// liveHeap is the heap's live bytes after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// residentSet is the process's RSS, from /proc; 0 where there is none.
func residentSet() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, pages uint64
	if _, err := fmt.Sscan(string(b), &size, &pages); err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// gauge is the value of the gauge called name in reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				v += m.GetGauge().GetValue()
			}
		}
	}
	return v
}

// yamuxWindow is what libp2p's muxer lets a stream send ahead of its
// reader: what a peer that does not read holds of each of its streams on
// its side, in this process the attackers'.
const yamuxWindow = 256 << 10

// TestUnreadAnswersHoldBoundedMemory: 32 identities, each with the two
// streams of each LeiosFetch version it may open, ask on each for full
// 12 MB closures 32 times over (pipelined) and never read. Each stream
// holds one answer of the host's bound on what its servers hold — its
// EB's body and one chunk of its txs — not the closure, and the heap grows
// by that and the attackers' own stream windows, where it grew by twice
// the closure a stream before; a peer that reads beside them is served
// both closures, whole.
func TestUnreadAnswersHoldBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a LeiosDB with two full closures and runs 33 libp2p hosts")
	}
	const attackers = 32
	db := openDB(t, t.TempDir())
	ebs := []*blocktest.EB{fullClosure(t, 0), fullClosure(t, 1_000)}
	for i, eb := range ebs {
		storeEB(t, db, 10+uint64(i), eb, eb.Txs)
	}
	f, err := New(Options{Store: db, Ingest: &bodyIngest{}, Limits: testLimits, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := NewService(ServiceOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 0x27
	h, err := network.NewHost(network.HostOptions{
		Key:             ed25519.NewKeyFromSeed(seed),
		ListenAddrs:     []string{"/ip4/127.0.0.1/tcp/0"},
		Services:        []network.Service{svc},
		MaxUnknownPeers: attackers + 1, // and the reader
		Logger:          quietLogger(),
		Registerer:      reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	})
	target, err := peer.AddrInfoFromString(h.P2PAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	connect := func() host.Host {
		raw := rawHost(t)
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		if err := raw.Connect(cctx, *target); err != nil {
			t.Fatal(err)
		}
		return raw
	}
	var raws []host.Host
	for range attackers {
		raws = append(raws, connect())
	}
	reader := connect()

	hashes := []block.Hash{ebs[0].Body.Hash(), ebs[1].Body.Hash()}
	all, err := BitmapsOf(seedsInt(0, len(ebs[0].Txs)))
	if err != nil {
		t.Fatal(err)
	}
	var asks2, asks1 []protocol.Message
	for range MaxPipelined + 1 {
		asks2 = append(asks2, &MsgMultiBlockRequest{EbHashes: hashes})
		asks1 = append(asks1, &MsgBlockTxsRequest{Point: ebs[0].Point(10), Bitmaps: all})
	}
	asks := []struct {
		spec   *protocol.Spec
		frames []byte
	}{
		{Spec2(testLimits), protocoltest.Frames(t, asks2...)},
		{Spec2(testLimits), protocoltest.Frames(t, asks2...)},
		{Spec(testLimits), protocoltest.Frames(t, asks1...)},
		{Spec(testLimits), protocoltest.Frames(t, asks1...)},
	}
	streams := attackers * len(asks)
	// What each stream holds, as the server takes it: room for the body
	// (a guess by EB hash, the announced size by point), a chunk and a tx.
	perStream := map[int]int{2: bodyGuess + replyChunk + txGuess, 1: int(ebs[0].Body.Size()) + replyChunk + txGuess}
	want := 0
	for _, a := range asks {
		want += attackers * perStream[max(a.spec.Version, 1)]
	}

	debug.FreeOSMemory()
	heapBefore, rssBefore := liveHeap(), residentSet()
	for _, raw := range raws {
		for _, a := range asks {
			st, err := raw.NewStream(ctx, target.ID, libp2pprotocol.ID(a.spec.ID()))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Write(a.frames); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Every stream's first answer is being written, and holds what it
	// holds until its peer reads or its write deadline (150 s) cuts it.
	held := func() float64 { return gauge(t, reg, "leiosnode_network_serve_held_bytes") }
	for deadline := time.Now().Add(time.Minute); held() != float64(want); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the servers hold %.0f bytes, want %d: %d streams of one answer each", held(), want, streams)
		}
	}
	heapHeld, rss := liveHeap()-heapBefore, residentSet()
	rssHeld := rss - min(rss, rssBefore)

	// Another peer that reads is served both closures beside them: the
	// bound has room for it.
	st, err := reader.NewStream(ctx, target.ID, libp2pprotocol.ID(Spec2(testLimits).ID()))
	if err != nil {
		t.Fatal(err)
	}
	client := protocol.NewSession(ctx, protocol.Config{Spec: Spec2(testLimits), Role: protocol.Client, Stream: st})
	defer client.Close()
	start := time.Now()
	if err := client.Send(&MsgMultiBlockRequest{EbHashes: hashes}); err != nil {
		t.Fatal(err)
	}
	for i, eb := range ebs {
		m, err := client.Recv(ctx)
		if err != nil {
			t.Fatalf("the reader's EB %d: %v", i, err)
		}
		got, ok := m.(*MsgMultiBlock)
		if !ok || !bytes.Equal(got.Body, eb.Body.Bytes()) || len(got.Txs) != len(eb.Txs) {
			t.Fatalf("the reader's EB %d: %T, not the EB with its %d txs", i, m, len(eb.Txs))
		}
		for j, tx := range got.Txs {
			if !bytes.Equal(tx, eb.Txs[j]) {
				t.Fatalf("the reader's EB %d: tx %d differs", i, j)
			}
		}
	}
	if m, err := client.Recv(ctx); err != nil {
		t.Fatal(err)
	} else if _, ok := m.(*MsgNoMoreBlocks); !ok {
		t.Fatalf("after the EBs: %T", m)
	}
	took := time.Since(start)

	// The bound, as docs/operations.md states it for these streams: what
	// the servers hold, within network.DefaultServeBytesHeld, and the
	// window each unread stream fills, here on the attackers' side. The
	// margin covers the sessions and the streams; under the race detector
	// more, for the store's reads in flight, which Pebble's checks then
	// track with a stack trace each.
	margin := 24 << 20
	if raceEnabled {
		margin += 32 << 20
	}
	bound := uint64(min(want, network.DefaultServeBytesHeld) + streams*yamuxWindow + margin)
	t.Logf("%d unread streams asking for 12 MB closures: the servers hold %d MiB; heap +%d MiB, RSS +%d MB (bound %d MiB); the reader's 24 MB took %v",
		streams, want>>20, heapHeld>>20, rssHeld/1e6, bound>>20, took.Round(time.Millisecond))
	if heapHeld > bound {
		t.Errorf("the unread streams hold %d MiB of heap, more than the bound of %d MiB", heapHeld>>20, bound>>20)
	}
}
