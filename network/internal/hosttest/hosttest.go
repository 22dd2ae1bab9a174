package hosttest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/network"
)

// Key is the node key of test host seed.
func Key(seed byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	s[0], s[1] = seed, 0xee
	return ed25519.NewKeyFromSeed(s)
}

// LogBuffer collects a host's logs for assertions.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Node is a running Host with its metrics and logs.
type Node struct {
	*network.Host
	Reg  *prometheus.Registry
	Logs *LogBuffer
	// Stop stops the host and waits for Run; later calls do nothing.
	Stop func()
}

// Start runs a host with key Key(seed), listening on loopback and dialing
// topology, with short backoffs, debug logs into Logs and metrics into
// Reg, until the test ends or Stop is called. configure adjusts the
// options before the host is built.
func Start(t *testing.T, seed byte, topology []string, configure ...func(*network.HostOptions)) *Node {
	t.Helper()
	n := &Node{Reg: prometheus.NewRegistry(), Logs: new(LogBuffer)}
	opts := network.HostOptions{
		Key:         Key(seed),
		ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"},
		Topology:    topology,
		MinBackoff:  50 * time.Millisecond,
		MaxBackoff:  400 * time.Millisecond,
		Logger:      slog.New(slog.NewTextHandler(n.Logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registerer:  n.Reg,
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
	n.Stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("host %s: Run: %v", h.ID(), err)
			}
		})
	}
	t.Cleanup(n.Stop)
	return n
}

// Eventually polls cond until it holds or 15 s have passed.
func Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Metric returns the sum of the counters and gauges called name whose
// labels include labels.
func Metric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
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
