package freeport

import (
	"net"
	"strconv"
	"testing"
)

// Ports are distinct, below the ephemeral range, and free: each binds.
func TestPortsAreDistinctFreeAndNotEphemeral(t *testing.T) {
	ports, err := Ports(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, port := range ports {
		if seen[port] {
			t.Fatalf("port %d handed out twice in %v", port, ports)
		}
		seen[port] = true
		if port < lowest || port >= ephemeralStart() {
			t.Fatalf("port %d outside %d–%d", port, lowest, ephemeralStart()-1)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d handed out but does not bind: %v", port, err)
		}
		l.Close()
	}
}
