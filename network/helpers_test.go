package network_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/chaintest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// loopback is where every test host listens.
var loopback = []string{"/ip4/127.0.0.1/tcp/0"}

func key(seed byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	s[0], s[1] = seed, 0xee
	return ed25519.NewKeyFromSeed(s)
}

// logBuffer collects a host's logs for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// node is a running Host with its chain, metrics and logs.
type node struct {
	*network.Host
	chain *chaintest.Chain
	reg   *prometheus.Registry
	logs  *logBuffer
	stop  func()
}

// startNode runs a host over chain (nil: no chain sync) until the test ends
// or stop is called.
func startNode(t *testing.T, seed byte, chain *chaintest.Chain, topology []string, configure ...func(*network.HostOptions)) *node {
	t.Helper()
	n := &node{chain: chain, reg: prometheus.NewRegistry(), logs: new(logBuffer)}
	opts := network.HostOptions{
		Key:            key(seed),
		ListenAddrs:    loopback,
		Topology:       topology,
		ValidateHeader: chaintest.ValidateHeader,
		MinBackoff:     50 * time.Millisecond,
		MaxBackoff:     400 * time.Millisecond,
		Logger:         slog.New(slog.NewTextHandler(n.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registerer:     n.reg,
	}
	if chain != nil {
		opts.Chain = chain
	}
	for _, c := range configure {
		c(&opts)
	}
	h, err := network.NewHost(opts)
	if err != nil {
		t.Fatal(err)
	}
	n.Host = h
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	var once sync.Once
	n.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("host %s: Run: %v", h.ID(), err)
			}
		})
	}
	t.Cleanup(n.stop)
	return n
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sameTip(chains ...*chaintest.Chain) func() bool {
	return func() bool {
		want := chains[0].Tip()
		for _, c := range chains[1:] {
			if c.Tip() != want {
				return false
			}
		}
		return true
	}
}

// metric returns the value of a counter or gauge with the given labels.
func metric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total
}

func hasBlock(c *chaintest.Chain, b *block.Block) bool {
	got, err := c.BlockByNumber(b.Header.BlockNumber)
	return err == nil && got.Hash() == b.Hash()
}
