package devnet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/devnet/supervisor"
	"github.com/leiosnode/leiosnode/lab/devnet/wan"
)

// messageBytesMetric is the node's count of its mini-protocol message
// bytes, by protocol and direction ("sent", "received").
const messageBytesMetric = "leiosnode_network_message_bytes_total"

// linkSettle is how long, beyond its links' longest latency twice, the
// lab is given to take the bytes the nodes had sent when they were asked.
const linkSettle = 500 * time.Millisecond

// nodeQueryTimeout bounds each of the account's GETs.
const nodeQueryTimeout = 5 * time.Second

// accountLinks is the lab's account of the run's links: every node's
// message bytes and peer connections read first, the lab's figures after
// the bytes sent meanwhile had time to reach it; each node's verdict
// printed. nil when the devnet's links are not proxied.
func accountLinks(ctx context.Context, client *http.Client, d *layout.Layout, mesh *wan.Mesh, first []*supervisor.Process, procs *supervisor.Processes, out io.Writer) *wan.Account {
	if mesh == nil {
		return nil
	}
	counts := make([]wan.NodeCount, len(d.Nodes))
	var asking sync.WaitGroup
	for i, n := range d.Nodes {
		asking.Go(func() {
			counts[i] = nodeCount(ctx, client, d, n)
			counts[i].Restarted = procs.Proc(i) != first[i]
		})
	}
	asking.Wait()
	settle := time.NewTimer(2*mesh.MaxLatency() + linkSettle)
	defer settle.Stop()
	select {
	case <-settle.C:
	case <-ctx.Done():
	}
	names := make([]string, len(d.Nodes))
	for i, n := range d.Nodes {
		names[i] = n.Name
	}
	a := mesh.Account(names, counts, time.Now())
	for _, v := range a.Nodes {
		fmt.Fprintf(out, "links: %s\n", v.Line)
	}
	if a.ThroughLab {
		fmt.Fprintf(out, "links: every node's connections and message bytes went through the lab's %d link proxies\n", len(d.Links))
	} else {
		fmt.Fprintln(out, "links: NOT every byte went through the lab: see the nodes above")
	}
	return &a
}

// nodeCount is what node n says of its traffic: its peer connections
// (GET /status) and its message bytes (GET /metrics).
func nodeCount(ctx context.Context, client *http.Client, d *layout.Layout, n layout.Node) wan.NodeCount {
	ctx, cancel := context.WithTimeout(ctx, nodeQueryTimeout)
	defer cancel()
	st, err := fetchStatus(ctx, client, n.HTTPAddr)
	if err != nil {
		return wan.NodeCount{}
	}
	sent, received, err := messageBytes(ctx, client, n.HTTPAddr)
	if err != nil {
		return wan.NodeCount{}
	}
	c := wan.NodeCount{Answered: true, Sent: sent, Received: received}
	for _, p := range st.Peers {
		c.Peers = append(c.Peers, peerConn(d, p))
	}
	return c
}

// peerConn is a peer of a node's /status as the lab knows it: the devnet
// node its ID names, its connection's remote host:port and direction.
func peerConn(d *layout.Layout, p apitypes.Peer) wan.PeerConn {
	c := wan.PeerConn{Peer: -1, PeerID: p.ID, Addr: p.Addr, Outbound: p.Direction == "outbound"}
	for j, n := range d.Nodes {
		if n.PeerID.String() == p.ID {
			c.Peer = j
		}
	}
	if hostPort, err := layout.TCPHostPort(p.Addr); err == nil {
		c.Addr = hostPort
	}
	return c
}

// messageBytes reads a node's message bytes sent and received, over all
// its protocols, from GET /metrics.
func messageBytes(ctx context.Context, client *http.Client, httpAddr string) (sent, received uint64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+httpAddr+"/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, 0, fmt.Errorf("GET /metrics: %w", err)
	}
	for _, m := range families[messageBytesMetric].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() != "direction" {
				continue
			}
			switch v := uint64(m.GetCounter().GetValue()); l.GetValue() {
			case "sent":
				sent += v
			case "received":
				received += v
			}
		}
	}
	return sent, received, nil
}
