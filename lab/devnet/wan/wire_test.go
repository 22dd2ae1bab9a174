package wan

import (
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

// The link the measurements emulate: 50 ms one way, 10 MB/s.
var measured = layout.LinkShape{Latency: 50 * time.Millisecond, BytesPerSecond: 10_000_000}

// sinkServer reads every connection to its end and sends on got the
// bytes' count and hash and when the last arrived.
type sunk struct {
	n    int64
	hash [32]byte
	last time.Time
}

func sinkServer(t *testing.T) (string, <-chan sunk) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan sunk, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				h := sha256.New()
				var s sunk
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						h.Write(buf[:n])
						s.n += int64(n)
						s.last = time.Now()
					}
					if err != nil {
						break
					}
				}
				copy(s.hash[:], h.Sum(nil))
				got <- s
			}()
		}
	}()
	return ln.Addr().String(), got
}

// TestLinkEmulationRoundTrip: a small message's round trip over a link is
// its latency twice, plus its serialisation, within a generous margin for
// a loaded machine.
func TestLinkEmulationRoundTrip(t *testing.T) {
	p := startTestProxy(t, echoServer(t), measured)
	c := dial(t, p.addr())
	var rtts []time.Duration
	buf := make([]byte, 100)
	for range 10 {
		start := time.Now()
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		rtts = append(rtts, time.Since(start))
	}
	slices.Sort(rtts)
	t.Logf("round trips over %v: min %v, median %v, max %v", measured, rtts[0], rtts[len(rtts)/2], rtts[len(rtts)-1])
	if floor := 2 * measured.Latency; rtts[0] < floor {
		t.Errorf("a round trip took %v, under twice the latency (%v)", rtts[0], floor)
	}
	if ceiling := 2*measured.Latency + 100*time.Millisecond; rtts[len(rtts)/2] > ceiling {
		t.Errorf("the median round trip took %v, over %v", rtts[len(rtts)/2], ceiling)
	}
	if sent, back := p.sent.delivered.Load(), p.received.delivered.Load(); sent != 1000 || back != 1000 {
		t.Errorf("the link counted %d bytes there and %d back, want 1000 each", sent, back)
	}
}

// TestLinkEmulationBulk: 5 MB over the link take at least their
// serialisation and latency, arrive whole and in order, and are counted to
// the byte; over the time they took beyond the latency they reach at least
// 80 % of its bandwidth. A loaded machine can only slow the proxy down,
// never speed the link up: the floor holds on every try, the rate on the
// best of three.
func TestLinkEmulationBulk(t *testing.T) {
	const size = 5_000_000
	data := make([]byte, size)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(data)
	best := 0.0
	for try := 1; try <= 3 && best < 0.8; try++ {
		target, got := sinkServer(t)
		p := startTestProxy(t, target, measured)
		c := dial(t, p.addr())
		start := time.Now()
		if _, err := c.Write(data); err != nil {
			t.Fatal(err)
		}
		c.Close()
		s := <-got
		took := s.last.Sub(start)
		share := float64(size) / (took - measured.Latency).Seconds() / float64(measured.BytesPerSecond)
		best = max(best, share)
		t.Logf("try %d: %d bytes over %v in %v: %.0f %% of the bandwidth after the latency", try, size, measured, took, 100*share)
		if s.n != size || s.hash != sha256.Sum256(data) {
			t.Fatalf("%d bytes arrived, whole and in order: %v", s.n, s.hash == sha256.Sum256(data))
		}
		if floor := time.Duration(size*int64(time.Second)/measured.BytesPerSecond) + measured.Latency; took < floor {
			t.Errorf("the transfer took %v, under its serialisation and latency (%v)", took, floor)
		}
		if entered, delivered := p.sent.entered.Load(), p.sent.delivered.Load(); entered != size || delivered != size {
			t.Errorf("the link counted %d bytes taken and %d delivered, want %d", entered, delivered, size)
		}
	}
	if best < 0.8 {
		t.Errorf("at best %.0f %% of the link's bandwidth, under 80 %%", 100*best)
	}
}

// TestLinkSharedByConnections: two connections between the same nodes
// share the link's bandwidth, as TCP flows over one link do.
func TestLinkSharedByConnections(t *testing.T) {
	target, got := sinkServer(t)
	p := startTestProxy(t, target, measured)
	const each = 2_000_000
	start := time.Now()
	var writers sync.WaitGroup
	for range 2 {
		c := dial(t, p.addr())
		writers.Go(func() {
			_, _ = c.Write(make([]byte, each))
			c.Close()
		})
	}
	writers.Wait()
	first, second := <-got, <-got
	took := max(first.last.Sub(start), second.last.Sub(start))
	t.Logf("2 × %d bytes over one %v link in %v", each, measured, took)
	if floor := time.Duration(2 * each * int64(time.Second) / measured.BytesPerSecond); took < floor {
		t.Errorf("two connections moved %d bytes in %v, faster than the link's bandwidth allows (%v)", 2*each, took, floor)
	}
}

// TestLinkBackPressure: a receiver that does not read holds the sender up
// once the link holds its bytes in flight: the lab takes no more than its
// bound, and the sender's writes block.
func TestLinkBackPressure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // never read
		}
	}()
	p := startTestProxy(t, ln.Addr().String(), measured)
	c := dial(t, p.addr())
	defer func() {
		if r := <-accepted; r != nil {
			r.Close()
		}
	}()
	const offered = 64 << 20
	_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
	written, err := c.Write(make([]byte, offered))
	if err == nil {
		t.Fatalf("%d bytes written to a receiver that reads nothing", written)
	}
	limit := uint64(p.forward.inFlightLimit())
	entered, delivered := p.sent.entered.Load(), p.sent.delivered.Load()
	t.Logf("%d bytes written before the sender blocked; the lab took %d, delivered %d (bound %d in flight)", written, entered, delivered, limit)
	if entered-delivered > limit {
		t.Errorf("the lab holds %d bytes in flight, over its bound of %d", entered-delivered, limit)
	}
}

// TestWireArrival: a wire serialises chunks one after the other, banks no
// idle time, and delivers each its latency after it left.
func TestWireArrival(t *testing.T) {
	w := &wire{shape: layout.LinkShape{Latency: 10 * time.Millisecond, BytesPerSecond: 1000}}
	t0 := time.Unix(1000, 0)
	want := func(got time.Time, after time.Duration) {
		t.Helper()
		if got != t0.Add(after) {
			t.Errorf("arrival at +%v, want +%v", got.Sub(t0), after)
		}
	}
	want(w.arrival(100, t0), 110*time.Millisecond)                          // 100 ms on the wire, then 10 ms
	want(w.arrival(100, t0.Add(50*time.Millisecond)), 210*time.Millisecond) // waits for the first
	want(w.arrival(10, t0.Add(time.Second)), 1020*time.Millisecond)         // an idle wire banks nothing
	unlimited := &wire{shape: layout.LinkShape{Latency: 10 * time.Millisecond}}
	if got := unlimited.arrival(1<<20, t0); got != t0.Add(10*time.Millisecond) {
		t.Errorf("no limit: arrival at +%v", got.Sub(t0))
	}
}
