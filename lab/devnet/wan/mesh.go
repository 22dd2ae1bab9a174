package wan

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

// Mesh is every link proxy of a devnet and the wires they share.
type Mesh struct {
	proxies []*proxy
	wires   map[[2]int]*wire // by [from, to] node of the bytes
	started time.Time
}

// Start starts a proxy for every link of d toward its node's libp2p port.
// The bytes each way between two nodes share one wire, shaped as the
// link of that direction says (as the one laid-out link's, when its
// reverse is not). On an error the proxies already started are closed.
func Start(d *layout.Layout) (*Mesh, error) {
	m := &Mesh{wires: map[[2]int]*wire{}, started: time.Now()}
	for _, l := range d.Links {
		m.wires[[2]int{l.From, l.To}] = &wire{shape: l.Shape}
	}
	for _, l := range d.Links {
		if _, ok := m.wires[[2]int{l.To, l.From}]; !ok {
			m.wires[[2]int{l.To, l.From}] = &wire{shape: l.Shape}
		}
	}
	for _, l := range d.Links {
		target, err := layout.TCPHostPort(d.Nodes[l.To].ListenAddr)
		if err != nil {
			m.Close()
			return nil, err
		}
		p, err := startProxy(l, target, m.wires[[2]int{l.From, l.To}], m.wires[[2]int{l.To, l.From}])
		if err != nil {
			m.Close()
			return nil, errors.Join(errors.New("starting the link proxies"), err)
		}
		m.proxies = append(m.proxies, p)
	}
	return m, nil
}

// Partition cuts every link between side and the other nodes, and
// restores every other link.
func (m *Mesh) Partition(side []int) {
	in := map[int]bool{}
	for _, n := range side {
		in[n] = true
	}
	for _, p := range m.proxies {
		p.setCut(in[p.link.From] != in[p.link.To])
	}
}

// Heal restores every link.
func (m *Mesh) Heal() {
	for _, p := range m.proxies {
		p.setCut(false)
	}
}

// Close stops every proxy and closes what they carry.
func (m *Mesh) Close() {
	if m == nil {
		return
	}
	for _, p := range m.proxies {
		p.close()
	}
}

// LinkStats is one direction of a link so far: the bytes From sent To,
// over every connection between them.
type LinkStats struct {
	From, To int
	Shape    layout.LinkShape
	// Entered are the bytes the lab took from From, Delivered those it
	// handed To; the difference was in flight.
	Entered, Delivered uint64
	// Connections are those From dialed To through the lab so far; Open
	// those it carries now.
	Connections uint64
	Open        int
}

// Stats are the links' figures so far, one per direction, by From then To.
func (m *Mesh) Stats() []LinkStats {
	byDir := map[[2]int]*LinkStats{}
	stats := func(from, to int) *LinkStats {
		s, ok := byDir[[2]int{from, to}]
		if !ok {
			s = &LinkStats{From: from, To: to, Shape: m.wires[[2]int{from, to}].shape}
			byDir[[2]int{from, to}] = s
		}
		return s
	}
	for _, p := range m.proxies {
		forward, back := stats(p.link.From, p.link.To), stats(p.link.To, p.link.From)
		forward.Entered += p.sent.entered.Load()
		forward.Delivered += p.sent.delivered.Load()
		back.Entered += p.received.entered.Load()
		back.Delivered += p.received.delivered.Load()
		forward.Connections += p.accepted.Load()
		forward.Open += p.connections()
	}
	all := make([]LinkStats, 0, len(byDir))
	for _, s := range byDir {
		all = append(all, *s)
	}
	slices.SortFunc(all, func(a, b LinkStats) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) })
	return all
}

// MaxLatency is the longest one-way latency of the links.
func (m *Mesh) MaxLatency() time.Duration {
	var longest time.Duration
	for _, w := range m.wires {
		longest = max(longest, w.shape.Latency)
	}
	return longest
}

// carries says whether the lab carries the connection node has to peer
// with the remote address remote (host:port): an outbound one dials a
// proxy of a link node → peer; an inbound one comes from a proxy of a
// link peer → node, which dialed node from remote.
func (m *Mesh) carries(node, peer int, remote string, outbound bool) bool {
	for _, p := range m.proxies {
		switch {
		case outbound && p.link.From == node && p.link.To == peer && p.addr() == remote:
			return true
		case !outbound && p.link.From == peer && p.link.To == node && p.dialed(remote):
			return true
		}
	}
	return false
}
