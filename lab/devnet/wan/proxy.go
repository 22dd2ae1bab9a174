package wan

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

// linkDialTimeout bounds the proxy's dial of the node a link leads to.
const linkDialTimeout = 5 * time.Second

// proxy forwards the connections From makes to To over the link's wires —
// forward for From's bytes, back for To's — until it is cut: a cut closes
// every connection it carries (both nodes see it close) and refuses new
// ones (accepted and closed at once) until the link is restored.
type proxy struct {
	link          layout.Link
	target        string // host:port of To's libp2p listener
	ln            net.Listener
	forward, back *wire
	// sent and received are the link's bytes From → To and back, on the
	// connections this proxy carries.
	sent, received counters
	// accepted counts the connections it carried.
	accepted atomic.Uint64

	// mu guards the fields below; it is never held across I/O but closes.
	mu     sync.Mutex
	cut    bool
	closed bool
	conns  map[*carried]struct{}
	// dialedFrom are the local addresses of every connection it dialed to
	// To: the remote address To sees for a connection From made.
	dialedFrom map[string]struct{}
	// serving counts the accept loop and the pumps, for close to wait on.
	serving sync.WaitGroup
}

// startProxy listens on link.Addr and forwards to target over forward and
// back.
func startProxy(link layout.Link, target string, forward, back *wire) (*proxy, error) {
	ln, err := net.Listen("tcp", link.Addr)
	if err != nil {
		return nil, err
	}
	p := &proxy{link: link, target: target, ln: ln, forward: forward, back: back,
		conns: map[*carried]struct{}{}, dialedFrom: map[string]struct{}{}}
	p.serving.Go(p.accept)
	return p, nil
}

// addr is where the proxy listens.
func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
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
		p.serving.Go(func() { p.carry(in) })
	}
}

// carry dials the target and pumps in to it both ways until either side
// closes or the link is cut.
func (p *proxy) carry(in net.Conn) {
	out, err := net.DialTimeout("tcp", p.target, linkDialTimeout)
	if err != nil {
		in.Close()
		return
	}
	c := newCarried(in, out)
	if !p.track(c) {
		c.close()
		return
	}
	p.accepted.Add(1)
	var pumps sync.WaitGroup
	pumps.Go(func() { pump(c, in, out, p.forward, &p.sent) })
	pumps.Go(func() { pump(c, out, in, p.back, &p.received) })
	pumps.Wait()
	p.untrack(c)
}

// track records a connection, unless the link was cut or closed
// meanwhile.
func (p *proxy) track(c *carried) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	p.dialedFrom[c.out.LocalAddr().String()] = struct{}{}
	return true
}

func (p *proxy) untrack(c *carried) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// dialed says the proxy dialed To from local (host:port).
func (p *proxy) dialed(local string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.dialedFrom[local]
	return ok
}

// setCut cuts the link (closing what it carries) or restores it.
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	p.cut = cut
	var open []*carried
	if cut {
		for c := range p.conns {
			open = append(open, c)
		}
	}
	p.mu.Unlock()
	for _, c := range open {
		c.close()
	}
}

// connections is how many connections the link carries now.
func (p *proxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// close stops the proxy and every connection it carries, and waits for its
// goroutines.
func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.setCut(true)
	p.ln.Close()
	p.serving.Wait()
}
