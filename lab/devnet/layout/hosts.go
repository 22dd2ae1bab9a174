package layout

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/multiformats/go-multiaddr"
)

// DefaultHostPort is the libp2p port of a host given without one; its
// HTTP API takes the next port.
const DefaultHostPort = 3001

// nodePlace is where a node listens (libp2p and HTTP) and where the other
// nodes dial it.
type nodePlace struct {
	listen string // libp2p multiaddr, without /p2p
	dial   string // the same, or its host's name
	http   string // host:port
}

// parseHost reads one host of --hosts or --relay-hosts: a multiaddr
// (/ip4/10.0.0.1/tcp/3001, /ip6/…, /dns/NAME/tcp/PORT), host:port
// (10.0.0.1:3001, [fd00::1]:3001, node1.example.org:3001), or a bare host
// (DefaultHostPort). The node listens there, and every other node's
// topology dials it there, so it must be an address of that host that the
// others reach; the HTTP API listens on the same host at the next port.
// libp2p listens on IP addresses only: a node given by name listens on all
// of its host's IPv4 addresses (HTTP on all addresses), and is dialed by
// name.
func parseHost(s string) (nodePlace, error) {
	s = strings.TrimSpace(s)
	host, port, err := splitHost(s)
	if err != nil {
		return nodePlace{}, fmt.Errorf("host %q: %w", s, err)
	}
	if port < 1 || port > 65534 {
		return nodePlace{}, fmt.Errorf("host %q: port %d: want 1–65534 (the HTTP API takes the next port)", s, port)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		dial := fmt.Sprintf("/dns/%s/tcp/%d", host, port)
		if _, err := multiaddr.NewMultiaddr(dial); err != nil {
			return nodePlace{}, fmt.Errorf("host %q: %w", s, err)
		}
		return nodePlace{listen: fmt.Sprintf("/ip4/0.0.0.0/tcp/%d", port), dial: dial, http: fmt.Sprintf(":%d", port+1)}, nil
	}
	if ip.IsUnspecified() {
		return nodePlace{}, fmt.Errorf("host %q: %s is no address other hosts can dial: give the host's own address (its config may then listen on %s)", s, host, host)
	}
	proto := "ip6"
	if ip4 := ip.To4(); ip4 != nil {
		proto, host = "ip4", ip4.String()
	}
	addr := fmt.Sprintf("/%s/%s/tcp/%d", proto, host, port)
	return nodePlace{listen: addr, dial: addr, http: net.JoinHostPort(host, strconv.Itoa(port+1))}, nil
}

// splitHost splits a host of parseHost into its host and port.
func splitHost(s string) (host string, port int, err error) {
	switch {
	case s == "":
		return "", 0, errors.New("empty")
	case strings.HasPrefix(s, "/"):
		return splitMultiaddr(s)
	case net.ParseIP(s) != nil: // an IPv6 address has colons but no port
		return s, DefaultHostPort, nil
	case !strings.Contains(s, ":"):
		return s, DefaultHostPort, nil
	}
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	port, err = strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q is not a number", p)
	}
	return host, port, nil
}

// errWantTCPMultiaddr: a host given as a multiaddr is not one a node can
// listen on or be dialed at.
var errWantTCPMultiaddr = errors.New("want /ip4|ip6|dns/HOST/tcp/PORT")

// splitMultiaddr reads /ip4|ip6|dns|dns4|dns6/HOST/tcp/PORT: the nodes
// speak libp2p over TCP only, and the /p2p/ part is the generator's to add.
func splitMultiaddr(s string) (host string, port int, err error) {
	m, err := multiaddr.NewMultiaddr(s)
	if err != nil {
		return "", 0, err
	}
	if len(m) != 2 || m[1].Code() != multiaddr.P_TCP {
		return "", 0, errWantTCPMultiaddr
	}
	switch m[0].Code() {
	case multiaddr.P_IP4, multiaddr.P_IP6, multiaddr.P_DNS, multiaddr.P_DNS4, multiaddr.P_DNS6:
	default:
		return "", 0, errWantTCPMultiaddr
	}
	port, err = strconv.Atoi(m[1].Value())
	return m[0].Value(), port, err
}

// placeOnHosts parses the pools' and relays' hosts and checks that no two
// nodes would listen on the same address and port.
func placeOnHosts(pools, relays []string) (poolPlaces, relayPlaces []nodePlace, err error) {
	used := map[string]string{} // host:port → who listens there
	claim := func(addr, who string) error {
		if other, ok := used[addr]; ok {
			return fmt.Errorf("%s and %s would both listen on %s: give nodes on one host ports at least 2 apart", other, who, addr)
		}
		used[addr] = who
		return nil
	}
	place := func(hosts []string, kind string) ([]nodePlace, error) {
		places := make([]nodePlace, len(hosts))
		for i, h := range hosts {
			p, err := parseHost(h)
			if err != nil {
				return nil, err
			}
			name := fmt.Sprintf("%s-%d", kind, i)
			// Both ports on the host the others dial (parseHost spells
			// its addresses so that these split).
			hostPort, _ := TCPHostPort(p.dial)
			host, _, _ := net.SplitHostPort(hostPort)
			_, httpPort, _ := net.SplitHostPort(p.http)
			if err := claim(hostPort, name+" (libp2p)"); err != nil {
				return nil, err
			}
			if err := claim(net.JoinHostPort(host, httpPort), name+" (HTTP)"); err != nil {
				return nil, err
			}
			places[i] = p
		}
		return places, nil
	}
	if poolPlaces, err = place(pools, "node"); err != nil {
		return nil, nil, err
	}
	if relayPlaces, err = place(relays, "relay"); err != nil {
		return nil, nil, err
	}
	return poolPlaces, relayPlaces, nil
}
