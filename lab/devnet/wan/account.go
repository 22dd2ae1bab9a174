package wan

import (
	"fmt"
	"strings"
	"time"
)

// NodeCount is what a node says of its traffic, from its API.
type NodeCount struct {
	// Answered: the node answered both; nothing below is known otherwise.
	Answered bool
	// Sent and Received are its mini-protocol message bytes
	// (leiosnode_network_message_bytes_total by direction). They must
	// have been read before the lab's figures they are compared with.
	Sent, Received uint64
	// Peers are the peer connections its /status lists.
	Peers []PeerConn
	// Restarted: its process started after the lab did, so its counters
	// miss bytes the lab carried (the overhead bound does not apply).
	Restarted bool
}

// PeerConn is a connection a node lists in its /status.
type PeerConn struct {
	// Peer is the devnet node it leads to, -1 when it is none of them.
	Peer     int
	PeerID   string
	Addr     string // the remote host:port, as the node sees it
	Outbound bool
}

// The bound of the lab's bytes against a node's message bytes: libp2p's
// framing (noise, yamux, stream negotiation, identify, ping) and the
// mini-protocols' own framing add to the messages; more than this would
// say the lab counts bytes the node never sent.
const (
	overheadFactor = 1.3
	// overheadPerConnection covers each connection's handshakes and the
	// per-stream negotiation of a short run, where they weigh most.
	overheadPerConnection = 64 << 10
)

// Account is the lab's account of a run: per link its bytes, and per node
// whether every byte it exchanged went through its links.
type Account struct {
	// ThroughLab: every node's connections and bytes went through the lab.
	ThroughLab bool          `json:"throughLab"`
	Seconds    float64       `json:"seconds"` // from the lab's start to the account
	Nodes      []NodeVerdict `json:"nodes"`
	Links      []LinkReport  `json:"links"`
}

// NodeVerdict is one node's part of the account.
type NodeVerdict struct {
	Name  string `json:"name"`
	Links int    `json:"links"` // the nodes it has a link with
	// LabSentBytes are the bytes the lab took from the node,
	// LabReceivedBytes those it delivered to it; NodeSentBytes and
	// NodeReceivedBytes the message bytes the node counted.
	LabSentBytes      uint64 `json:"labSentBytes"`
	LabReceivedBytes  uint64 `json:"labReceivedBytes"`
	NodeSentBytes     uint64 `json:"nodeSentBytes"`
	NodeReceivedBytes uint64 `json:"nodeReceivedBytes"`
	// Connections are the peer connections its /status listed;
	// Bypassing those the lab does not carry.
	Connections int      `json:"connections"`
	Bypassing   []string `json:"bypassing,omitempty"`
	// ThroughLab: it answered, every connection it listed is one the lab
	// carries, and the lab carried at least the bytes it counted each way.
	ThroughLab bool `json:"throughLab"`
	// Plausible: the lab's bytes are within libp2p's overhead of the
	// node's (not judged for a node restarted during the run).
	Plausible bool     `json:"plausible"`
	Problems  []string `json:"problems,omitempty"`
	Line      string   `json:"line"`
}

// LinkReport is one direction of a link over the run.
type LinkReport struct {
	From           string  `json:"from"`
	To             string  `json:"to"`
	LatencyMs      float64 `json:"latencyMs"`
	BandwidthBytes int64   `json:"bandwidthBytesPerSecond,omitempty"` // 0: no limit
	Bytes          uint64  `json:"bytes"`                             // delivered From → To
	MeanRate       float64 `json:"meanBytesPerSecond"`                // over Account.Seconds
	Connections    uint64  `json:"connections"`                       // From dialed To through the lab
}

// Account compares what the lab carried with what each node (named by
// names, in the layout's order) says, as of now. counts must have been
// read before the call: the lab's figures only grow, so a node's bytes
// received can never exceed what the lab delivered to it unless some came
// another way; its bytes sent are taken by the lab as soon as it writes
// them (give the lab a moment to take the last).
func (m *Mesh) Account(names []string, counts []NodeCount, now time.Time) Account {
	stats := m.Stats()
	a := Account{ThroughLab: true, Seconds: now.Sub(m.started).Seconds()}
	for _, s := range stats {
		l := LinkReport{From: names[s.From], To: names[s.To], LatencyMs: float64(s.Shape.Latency) / float64(time.Millisecond),
			BandwidthBytes: s.Shape.BytesPerSecond, Bytes: s.Delivered, Connections: s.Connections}
		if a.Seconds > 0 {
			l.MeanRate = float64(s.Delivered) / a.Seconds
		}
		a.Links = append(a.Links, l)
	}
	for i := range names {
		v := m.verdict(i, names, counts[i], stats)
		a.ThroughLab = a.ThroughLab && v.ThroughLab
		a.Nodes = append(a.Nodes, v)
	}
	return a
}

func (m *Mesh) verdict(i int, names []string, c NodeCount, stats []LinkStats) NodeVerdict {
	name := names[i]
	v := NodeVerdict{Name: name, NodeSentBytes: c.Sent, NodeReceivedBytes: c.Received, Connections: len(c.Peers), Plausible: true}
	var carried uint64 // connections the lab carried to or from the node
	for _, s := range stats {
		if s.From == i {
			v.Links++
			v.LabSentBytes += s.Entered
			carried += s.Connections
		}
		if s.To == i {
			v.LabReceivedBytes += s.Delivered
			carried += s.Connections
		}
	}
	lab := v.LabSentBytes + v.LabReceivedBytes
	if !c.Answered {
		v.Problems = append(v.Problems, "it did not answer: not checked")
		v.Line = fmt.Sprintf("%s: %s through its %s; not checked: the node did not answer", name, megabytes(lab), links(v.Links))
		return v
	}
	for _, p := range c.Peers {
		if p.Peer < 0 || !m.carries(i, p.Peer, p.Addr, p.Outbound) {
			dir := "inbound from"
			if p.Outbound {
				dir = "outbound to"
			}
			peer := p.PeerID + " (no node of the devnet)"
			if p.Peer >= 0 {
				peer = names[p.Peer]
			}
			v.Bypassing = append(v.Bypassing, fmt.Sprintf("%s, %s %s", peer, dir, p.Addr))
		}
	}
	if len(v.Bypassing) > 0 {
		v.Problems = append(v.Problems, fmt.Sprintf("%d of its %d connections go around the lab: %s", len(v.Bypassing), len(c.Peers), strings.Join(v.Bypassing, "; ")))
	}
	if c.Received > v.LabReceivedBytes {
		v.Problems = append(v.Problems, fmt.Sprintf("it received %s of messages but the lab delivered it %s: the rest came around the lab", megabytes(c.Received), megabytes(v.LabReceivedBytes)))
	}
	if c.Sent > v.LabSentBytes {
		v.Problems = append(v.Problems, fmt.Sprintf("it sent %s of messages but the lab took %s from it: the rest went around the lab", megabytes(c.Sent), megabytes(v.LabSentBytes)))
	}
	v.ThroughLab = len(v.Problems) == 0
	node := c.Sent + c.Received
	if bound := uint64(overheadFactor*float64(node)) + overheadPerConnection*max(carried, 1); !c.Restarted && lab > bound {
		v.Plausible = false
		v.Problems = append(v.Problems, fmt.Sprintf("the lab carried %s for its %s of messages, more than libp2p's overhead explains (%s at most)", megabytes(lab), megabytes(node), megabytes(bound)))
	}
	verdict := "every connection through the lab"
	if !v.ThroughLab || !v.Plausible {
		verdict = strings.Join(v.Problems, "; ")
	}
	v.Line = fmt.Sprintf("%s: %s through its %s, %s counted by the node; %s", name, megabytes(lab), links(v.Links), megabytes(node), verdict)
	return v
}

// megabytes is n in MB, to a tenth (kB below one).
func megabytes(n uint64) string {
	if n < 1e6 {
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

func links(n int) string {
	if n == 1 {
		return "1 link"
	}
	return fmt.Sprintf("%d links", n)
}
