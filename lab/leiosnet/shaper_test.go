package leiosnet

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"

	"github.com/leiosnode/leiosnode/internal/waittest"
)

// A wire serializes what is queued one after the other, and an idle wire
// gives no credit for its idle time.
func TestWireBanksNothing(t *testing.T) {
	w := &wire{rate: 1e6, latency: 10 * time.Millisecond} // 1 MB/s: 1,000 bytes a millisecond
	t0 := time.Unix(1_700_000_000, 0)
	for i, tc := range []struct {
		at   time.Duration
		n    int
		want time.Duration
	}{
		{0, 1000, time.Millisecond},                         // an idle wire: serialization only
		{0, 1000, 2 * time.Millisecond},                     // queued behind the first
		{time.Second, 1000, time.Second + time.Millisecond}, // a second idle: nothing banked
		{time.Second, 16_000, time.Second + 17*time.Millisecond},
	} {
		if got := w.reserve(t0.Add(tc.at), tc.n); got != t0.Add(tc.want) {
			t.Errorf("reservation %d: serialized at +%v, want +%v", i, got.Sub(t0), tc.want)
		}
	}
}

// Bytes written on a shaped stream arrive whole and in order, and no
// sooner than their serialization at the link rate plus the latency, in
// each direction at once (a link is full duplex).
func TestShapedStreamsTakeLatencyAndSerialization(t *testing.T) {
	const (
		rate    = 2e6 // bytes per second
		latency = 30 * time.Millisecond
		size    = 200_000 // 100 ms at the rate
	)
	hosts := shapedPair(t, rate, latency)
	rng := rand.New(rand.NewPCG(1, 2))
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	// Each host echoes nothing: it reads the other's payload to the end and
	// reports when the last byte came.
	type arrival struct {
		at   time.Time
		data []byte
	}
	arrived := make(chan arrival, 2)
	for _, h := range hosts {
		h.SetStreamHandler("/test/1", func(st network.Stream) {
			data, _ := io.ReadAll(st)
			arrived <- arrival{time.Now(), data}
			_ = st.Close()
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Hang)
	defer cancel()
	start := time.Now()
	for i, h := range hosts {
		other := hosts[1-i].ID()
		go func() {
			st, err := h.NewStream(ctx, other, "/test/1")
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := st.Write(payload); err != nil {
				t.Error(err)
			}
			_ = st.CloseWrite()
		}()
	}
	floor := time.Duration(size/rate*float64(time.Second)) + latency
	for range hosts {
		select {
		case a := <-arrived:
			if !bytes.Equal(a.data, payload) {
				t.Fatalf("%d bytes arrived, not the %d written in order", len(a.data), len(payload))
			}
			if took := a.at.Sub(start); took < floor {
				t.Errorf("the payload crossed in %v, under its serialization plus latency, %v", took, floor)
			}
		case <-ctx.Done():
			t.Fatal("the payloads never arrived")
		}
	}
}

// A Close racing a Write ends the Write with an error, never a panic, and
// what was queued before the Close still arrives, then the end.
func TestShapedStreamCloseRacingWrite(t *testing.T) {
	hosts := shapedPair(t, 1e6, time.Millisecond)
	received := make(chan int, 1)
	hosts[1].SetStreamHandler("/test/1", func(st network.Stream) {
		data, _ := io.ReadAll(st)
		received <- len(data)
	})
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Hang)
	defer cancel()
	st, err := hosts[0].NewStream(ctx, hosts[1].ID(), "/test/1")
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan int)
	go func() {
		total := 0
		for {
			n, err := st.Write(make([]byte, 3000))
			total += n
			if err != nil {
				wrote <- total
				return
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	total := <-wrote
	select {
	case got := <-received:
		if got != total {
			t.Errorf("%d bytes arrived of the %d queued before the close", got, total)
		}
	case <-ctx.Done():
		t.Fatal("the stream's end never arrived")
	}
}

// shapedPair is two connected mocknet hosts whose streams are shaped at
// rate and latency.
func shapedPair(t *testing.T, rate float64, latency time.Duration) []*shapedHost {
	t.Helper()
	mn := mocknet.New()
	t.Cleanup(func() { _ = mn.Close() })
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	var hosts []*shapedHost
	for range 2 {
		h, err := mn.GenPeer()
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, newShapedHost(h, rate, latency, stop))
	}
	if err := mn.LinkAll(); err != nil {
		t.Fatal(err)
	}
	if err := mn.ConnectAllButSelf(); err != nil {
		t.Fatal(err)
	}
	return hosts
}
