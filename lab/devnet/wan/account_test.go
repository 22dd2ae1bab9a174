package wan

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

// twoNodeMesh is a mesh of two echoing "nodes" linked both ways, and the
// names of its nodes.
func twoNodeMesh(t *testing.T, shape layout.LinkShape) (*Mesh, []string) {
	t.Helper()
	d := &layout.Layout{}
	for range 2 {
		host, port, _ := net.SplitHostPort(echoServer(t))
		d.Nodes = append(d.Nodes, layout.Node{ListenAddr: "/ip4/" + host + "/tcp/" + port})
	}
	d.Links = []layout.Link{{From: 0, To: 1, Addr: "127.0.0.1:0", Shape: shape}, {From: 1, To: 0, Addr: "127.0.0.1:0", Shape: shape}}
	m, err := Start(d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, []string{"node-0", "node-1"}
}

// TestAccount: node 0 dials node 1 through the lab and 1 kB goes there
// and back. Told the connection as each node lists it, the account finds
// both through the lab with the bytes each way; a connection the lab does
// not carry, or more bytes received than the lab delivered, are found out.
func TestAccount(t *testing.T) {
	m, names := twoNodeMesh(t, layout.LinkShape{Latency: time.Millisecond})
	c := dial(t, m.proxies[0].addr())
	if _, err := c.Write(make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	var inboundFrom string
	m.proxies[0].mu.Lock()
	for local := range m.proxies[0].dialedFrom {
		inboundFrom = local
	}
	m.proxies[0].mu.Unlock()
	counts := []NodeCount{
		{Answered: true, Sent: 900, Received: 900, Peers: []PeerConn{{Peer: 1, Addr: m.proxies[0].addr(), Outbound: true}}},
		{Answered: true, Sent: 900, Received: 900, Peers: []PeerConn{{Peer: 0, Addr: inboundFrom}}},
	}
	a := m.Account(names, counts, time.Now())
	if !a.ThroughLab {
		t.Fatalf("not through the lab: %+v", a.Nodes)
	}
	for i, v := range a.Nodes {
		if v.LabSentBytes != 1000 || v.LabReceivedBytes != 1000 || v.Links != 1 || !v.Plausible {
			t.Errorf("node %d: %+v", i, v)
		}
		if want := names[i] + ": 2.0 kB through its 1 link, 1.8 kB counted by the node; every connection through the lab"; v.Line != want {
			t.Errorf("line %q, want %q", v.Line, want)
		}
	}
	if len(a.Links) != 2 || a.Links[0].Bytes != 1000 || a.Links[1].Bytes != 1000 || a.Links[0].Connections != 1 || a.Links[1].Connections != 0 {
		t.Errorf("links %+v", a.Links)
	}

	counts[0].Peers = append(counts[0].Peers, PeerConn{Peer: 1, Addr: "127.0.0.1:1", Outbound: true})
	counts[1].Received = 5000
	a = m.Account(names, counts, time.Now())
	if a.ThroughLab || a.Nodes[0].ThroughLab || a.Nodes[1].ThroughLab {
		t.Fatalf("a bypass and a surplus found nothing: %+v", a.Nodes)
	}
	if len(a.Nodes[0].Bypassing) != 1 || !strings.Contains(a.Nodes[0].Line, "1 of its 2 connections go around the lab: node-1, outbound to 127.0.0.1:1") {
		t.Errorf("node 0: %q", a.Nodes[0].Line)
	}
	if !strings.Contains(a.Nodes[1].Line, "it received 5.0 kB of messages but the lab delivered it 1.0 kB") {
		t.Errorf("node 1: %q", a.Nodes[1].Line)
	}
	// An outbound connection to the proxy of another pair's link is no
	// connection to that peer through the lab.
	if m.carries(1, 0, m.proxies[0].addr(), true) {
		t.Error("node 1's connection to node 0 at node 0's own proxy counted as carried")
	}
}

// TestReverseBytesShareTheWire: the bytes back on a connection node 0
// dialed go over the 1 → 0 wire, which node 1's own connections use too.
func TestReverseBytesShareTheWire(t *testing.T) {
	m, _ := twoNodeMesh(t, layout.LinkShape{})
	if m.proxies[0].back != m.proxies[1].forward || m.proxies[0].forward != m.proxies[1].back {
		t.Error("the two proxies of a pair do not share its wires")
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]int64{
		"100Mbit": 12_500_000, "100mbit/s": 12_500_000, "1Gbit": 125_000_000, "512kbit": 64_000, "12.5MB": 12_500_000,
		"500kB": 500_000, "1MiB": 1 << 20, "12500000": 12_500_000, "0": 0, " 8 bit ": 1,
	} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "fast", "100Mbps", "12.5Mb", "-1", "1bit", "1e30GB", "NaN"} {
		if got, err := ParseRate(bad); err == nil {
			t.Errorf("%q: %d, no error", bad, got)
		}
	}
}
