package wan

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

// echoServer answers every byte with itself, until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// Waits of a round trip: one expected to come back may take a busy
// machine long and is given a hang's ceiling; one expected not to is
// given up after cutShown, and a slow machine only makes that more likely.
const (
	echoed   = waittest.Hang
	cutShown = 5 * time.Second
)

// roundTrip sends a line over c and says whether it came back within wait.
func roundTrip(c net.Conn, wait time.Duration) bool {
	_ = c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "ping\n"
}

// dial connects to addr, closed when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startTestProxy is a proxy of one link 0 → 1 to target, shaped alike
// both ways.
func startTestProxy(t *testing.T, target string, shape layout.LinkShape) *proxy {
	t.Helper()
	p, err := startProxy(layout.Link{From: 0, To: 1, Addr: "127.0.0.1:0", Shape: shape}, target, &wire{shape: shape}, &wire{shape: shape})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return p
}

// TestLinkProxy: a link forwards both ways; a cut closes what it carries
// and refuses new connections; restored, it forwards again.
func TestLinkProxy(t *testing.T) {
	p := startTestProxy(t, echoServer(t), layout.LinkShape{})
	before := dial(t, p.addr())
	if !roundTrip(before, echoed) {
		t.Fatal("no echo through the link")
	}
	if n := p.connections(); n != 1 {
		t.Errorf("%d connections carried, want 1", n)
	}
	p.setCut(true)
	if roundTrip(before, cutShown) {
		t.Error("a connection carried before the cut still works")
	}
	if roundTrip(dial(t, p.addr()), cutShown) {
		t.Error("a new connection works through a cut link")
	}
	p.setCut(false)
	if !roundTrip(dial(t, p.addr()), echoed) {
		t.Error("no echo through the restored link")
	}
	if n := p.accepted.Load(); n != 2 {
		t.Errorf("%d connections counted, want 2 (the refused one is not carried)", n)
	}
}

// TestMeshPartition: a partition cuts exactly the links across it, and
// the connections one side makes are told apart from the other's.
func TestMeshPartition(t *testing.T) {
	d := &layout.Layout{}
	for i := range 4 {
		host, port, _ := net.SplitHostPort(echoServer(t))
		d.Nodes = append(d.Nodes, layout.Node{ListenAddr: "/ip4/" + host + "/tcp/" + port})
		for j := range i {
			d.Links = append(d.Links, layout.Link{From: i, To: j, Addr: "127.0.0.1:0"}, layout.Link{From: j, To: i, Addr: "127.0.0.1:0"})
		}
	}
	m, err := Start(d)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// works says whether p carries an echo, waiting as long as its
	// expectation needs.
	works := func(p *proxy, expected bool) bool {
		c, err := net.Dial("tcp", p.addr())
		if err != nil {
			return false
		}
		defer c.Close()
		if expected {
			return roundTrip(c, echoed)
		}
		return roundTrip(c, cutShown)
	}
	m.Partition([]int{1, 3})
	for _, p := range m.proxies {
		across := (p.link.From == 1 || p.link.From == 3) != (p.link.To == 1 || p.link.To == 3)
		if works(p, !across) == across {
			t.Errorf("link %d→%d: works %v during a partition of 1 and 3", p.link.From, p.link.To, !across)
		}
	}
	m.Heal()
	for _, p := range m.proxies {
		if !works(p, true) {
			t.Errorf("link %d→%d does not work after the heal", p.link.From, p.link.To)
		}
	}
}

func TestTCPHostPort(t *testing.T) {
	for addr, want := range map[string]string{
		"/ip4/127.0.0.1/tcp/3001": "127.0.0.1:3001", "/ip6/::1/tcp/3001": "[::1]:3001", "/dns/n.example.org/tcp/3001": "n.example.org:3001",
	} {
		if got, err := layout.TCPHostPort(addr); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %s", addr, got, err, want)
		}
	}
	for _, bad := range []string{"/ip4/127.0.0.1/udp/1", "127.0.0.1:1", "/ip4/127.0.0.1/tcp/1/p2p/x", "/unix/tmp/tcp/1"} {
		if _, err := layout.TCPHostPort(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
