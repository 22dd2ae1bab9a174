package network

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestServeBudget: a peer's streams share its budget, so two streams of one
// peer take twice as long as one; two peers share the total; a frame larger
// than a second's budget still goes, in pieces; the open streams are
// counted and uncounted. On virtual time.
func TestServeBudget(t *testing.T) {
	const perPeer, total = 1000, 1500 // bytes a second, and the bursts
	send := func(b *serveBudget, id peer.ID, streams, bytes int) time.Duration {
		start := time.Now()
		done := make(chan struct{}, streams)
		for range streams {
			pace, release := b.acquire(id, "test")
			go func() {
				for sent := 0; sent < bytes; sent += 100 {
					if err := pace(context.Background(), 100); err != nil {
						t.Error(err)
					}
				}
				release()
				done <- struct{}{}
			}()
		}
		for range streams {
			<-done
		}
		return time.Since(start)
	}
	synctest.Test(t, func(t *testing.T) {
		b := newServeBudget(perPeer, total, 1<<20, newMetrics())
		// One stream, 3,000 bytes: the burst, then 2 s.
		if d := send(b, "a", 1, 3000); d != 2*time.Second {
			t.Errorf("one stream of 3,000 bytes took %v, want 2s", d)
		}
		b.mu.Lock()
		kept := len(b.peers)
		b.mu.Unlock()
		if n := value(t, b.open.WithLabelValues("test")); n != 0 || kept != 0 {
			t.Errorf("%v streams counted open, %d peers kept, after they ended", n, kept)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		b := newServeBudget(perPeer, total, 1<<20, newMetrics())
		// Two streams of one peer share its 1,000 a second.
		if d := send(b, "a", 2, 1500); d != 2*time.Second {
			t.Errorf("two streams of 1,500 bytes of one peer took %v, want 2s", d)
		}
		if w := value(t, b.waited.WithLabelValues("peer")); w == 0 {
			t.Error("no wait for the peer's budget counted")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		b := newServeBudget(perPeer, total, 1<<20, newMetrics())
		// Two peers, 2,500 bytes each, share the total of 1,500 a second:
		// 5,000 bytes less its burst take 2.33 s, where each peer alone
		// would need 1.5 s.
		done := make(chan time.Duration, 2)
		for _, id := range []peer.ID{"a", "b"} {
			go func() { done <- send(b, id, 1, 2500) }()
		}
		if d := max(<-done, <-done); d < 2200*time.Millisecond || d > 2500*time.Millisecond {
			t.Errorf("two peers of 2,500 bytes each took %v, want about 2.33s", d)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		b := newServeBudget(perPeer, total, 1<<20, newMetrics())
		pace, release := b.acquire("a", "test")
		defer release()
		start := time.Now()
		if err := pace(context.Background(), 2500); err != nil { // larger than any burst
			t.Fatal(err)
		}
		if d := time.Since(start); d != 1500*time.Millisecond {
			t.Errorf("a frame of 2,500 bytes waited %v, want 1.5s", d)
		}
	})
}

// value is a counter's or gauge's value.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var v dto.Metric
	if err := m.Write(&v); err != nil {
		t.Fatal(err)
	}
	if c := v.GetCounter(); c != nil {
		return c.GetValue()
	}
	return v.GetGauge().GetValue()
}

// TestServeBudgetHold: answers hold bytes of the bound until they release
// them; one that does not fit waits until others release, and its wait
// is counted; more than the bound takes the whole of it; a wait ends with
// its context; the gauge shows what is held. On virtual time.
func TestServeBudgetHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = 1000
		b := newServeBudget(1<<20, 1<<20, bound, newMetrics())
		ctx := context.Background()
		first, err := b.hold(ctx, 600)
		if err != nil {
			t.Fatal(err)
		}
		if held := value(t, b.heldBytes); held != 600 {
			t.Fatalf("%v bytes held, want 600", held)
		}
		waited := value(t, b.waited.WithLabelValues("held"))
		got := make(chan time.Duration, 1)
		go func() {
			start := time.Now()
			second, err := b.hold(ctx, 600)
			if err != nil {
				t.Error(err)
				return
			}
			got <- time.Since(start)
			second()
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("1,200 bytes held of a bound of 1,000")
		default:
		}
		first()
		first() // a second release gives back nothing more
		if d := <-got; d != time.Second {
			t.Fatalf("the second answer waited %v, want 1s", d)
		}
		if w := value(t, b.waited.WithLabelValues("held")) - waited; w != 1 {
			t.Fatalf("%v s of waiting counted, want 1", w)
		}
		whole, err := b.hold(ctx, 5*bound)
		if err != nil {
			t.Fatal(err)
		}
		if held := value(t, b.heldBytes); held != bound {
			t.Fatalf("%v bytes held for an answer larger than the bound, want the bound, %d", held, bound)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := b.hold(cctx, 1); err == nil {
			t.Fatal("held beyond the bound")
		}
		whole()
		if held := value(t, b.heldBytes); held != 0 {
			t.Fatalf("%v bytes held after every release", held)
		}
	})
}
