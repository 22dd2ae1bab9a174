package chaos

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/internal/devnet/layout"
)

// linkDialTimeout bounds the proxy's dial of the node a link leads to.
const linkDialTimeout = 5 * time.Second

// linkProxy forwards the connections From makes to To, until it is cut: a
// cut closes every connection it carries (both nodes see it close) and
// refuses new ones (accepted and closed at once) until the link is
// restored. A partition is a cut of every link across it.
type linkProxy struct {
	link   layout.Link
	target string // host:port of To's libp2p listener
	ln     net.Listener

	// mu guards the fields below; it is never held across I/O but closes.
	mu     sync.Mutex
	cut    bool
	closed bool
	conns  map[net.Conn]struct{} // both halves of every connection carried
	// serving counts the accept loop and the pipes, for close to wait on.
	serving sync.WaitGroup
}

// startLinkProxy listens on link.Addr and forwards to target.
func startLinkProxy(link layout.Link, target string) (*linkProxy, error) {
	ln, err := net.Listen("tcp", link.Addr)
	if err != nil {
		return nil, err
	}
	p := &linkProxy{link: link, target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.serving.Go(p.accept)
	return p, nil
}

func (p *linkProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		refuse := p.cut || p.closed
		p.mu.Unlock()
		if refuse {
			in.Close()
			continue
		}
		p.serving.Go(func() { p.forward(in) })
	}
}

// forward dials the target and pipes in to it both ways until either side
// closes or the link is cut.
func (p *linkProxy) forward(in net.Conn) {
	out, err := net.DialTimeout("tcp", p.target, linkDialTimeout)
	if err != nil {
		in.Close()
		return
	}
	if !p.track(in, out) {
		in.Close()
		out.Close()
		return
	}
	var pipes sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// One direction ended: the connection is over for libp2p, which
		// never half-closes; close both so the other copy ends too.
		dst.Close()
		src.Close()
	}
	pipes.Go(func() { pipe(out, in) })
	pipes.Go(func() { pipe(in, out) })
	pipes.Wait()
	p.untrack(in, out)
}

// track records a connection's two halves, unless the link was cut or
// closed meanwhile.
func (p *linkProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.closed {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *linkProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// setCut cuts the link (closing what it carries) or restores it.
func (p *linkProxy) setCut(cut bool) {
	p.mu.Lock()
	p.cut = cut
	var open []net.Conn
	if cut {
		for c := range p.conns {
			open = append(open, c)
		}
	}
	p.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
}

// connections is how many connections the link carries now.
func (p *linkProxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// close stops the proxy and every connection it carries, and waits for its
// goroutines.
func (p *linkProxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.setCut(true)
	p.ln.Close()
	p.serving.Wait()
}

// LinkMesh is every link proxy of a devnet.
type LinkMesh struct {
	proxies []*linkProxy
}

// StartLinkMesh starts a proxy for every link of d toward its node's
// libp2p port. On an error the proxies already started are closed.
func StartLinkMesh(d *layout.Layout) (*LinkMesh, error) {
	m := &LinkMesh{}
	for _, l := range d.Links {
		target, err := layout.TCPHostPort(d.Nodes[l.To].ListenAddr)
		if err != nil {
			m.Close()
			return nil, err
		}
		p, err := startLinkProxy(l, target)
		if err != nil {
			m.Close()
			return nil, errors.Join(errors.New("starting the link proxies"), err)
		}
		m.proxies = append(m.proxies, p)
	}
	return m, nil
}

// partition cuts every link between side and the other nodes, and restores
// every other link.
func (m *LinkMesh) partition(side []int) {
	in := map[int]bool{}
	for _, n := range side {
		in[n] = true
	}
	for _, p := range m.proxies {
		p.setCut(in[p.link.From] != in[p.link.To])
	}
}

// heal restores every link.
func (m *LinkMesh) heal() {
	for _, p := range m.proxies {
		p.setCut(false)
	}
}

// close stops every proxy.
func (m *LinkMesh) Close() {
	if m == nil {
		return
	}
	for _, p := range m.proxies {
		p.close()
	}
}
