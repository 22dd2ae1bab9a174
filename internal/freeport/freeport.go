// Package freeport finds loopback TCP ports for nodes that must know each
// other's addresses before any of them starts (a devnet's layout, a test's
// network, a benchmark's pair of nodes).
//
// The usual trick — listen on port 0, note the port, close — hands out a
// port from the kernel's ephemeral range, the same range every outgoing
// connection takes its local port from. On a busy machine (two test
// packages at once, a node dialing its peers) one of those connections can
// take the port between the close and the node's own bind, and the node
// fails with "address already in use". Ports is the trick without that
// window: it picks below the ephemeral range, where the kernel never
// allocates on its own, at a random place so that two processes picking
// at once rarely meet, and checks each port binds.
//
// What it cannot promise: that nobody binds the port on purpose between
// Ports returning and its caller binding it.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowest is the lowest port Ports hands out: below it sit well-known and
// registered services an operator may run.
const lowest = 10000

// Ports returns n distinct loopback ports that were free when asked and lie
// outside the kernel's ephemeral port range.
func Ports(n int) ([]int, error) {
	ephemeralLow := ephemeralStart()
	if ephemeralLow-lowest < 4*n {
		return nil, fmt.Errorf("finding %d free ports: the ephemeral range starts at %d, leaving too few below it", n, ephemeralLow)
	}
	span := ephemeralLow - lowest
	start := rand.IntN(span)
	ports := make([]int, 0, n)
	// Hold every listener until all ports are known, so they are distinct.
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for i := 0; i < span && len(ports) < n; i++ {
		port := lowest + (start+i)%span
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // in use: try the next
		}
		listeners = append(listeners, l)
		ports = append(ports, port)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("finding %d free ports: only %d of %d–%d were free", n, len(ports), lowest, ephemeralLow-1)
	}
	return ports, nil
}

// Addrs returns n loopback host:port addresses as Ports finds them.
func Addrs(n int) ([]string, error) {
	ports, err := Ports(n)
	if err != nil {
		return nil, err
	}
	addrs := make([]string, n)
	for i, port := range ports {
		addrs[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	return addrs, nil
}

// ephemeralStart is the first port of the kernel's ephemeral range as Linux
// states it; 32768 where nothing readable says (Linux's default, and below
// the 49152 that BSDs and macOS start at).
func ephemeralStart() int {
	const fallback = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return fallback
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return fallback
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return fallback
	}
	return low
}
