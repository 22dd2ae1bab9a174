package network

import (
	"testing"

	ma "github.com/multiformats/go-multiaddr"
)

// TestShareableAddresses: a peer is told only addresses it can reach from
// where it is: a public peer only public ones, a peer on a private network
// no loopback ones, a peer on this machine any; never an unspecified
// address, a peer-qualified one, a non-TCP one or one twice.
func TestShareableAddresses(t *testing.T) {
	addrs := func(ss ...string) []ma.Multiaddr {
		var out []ma.Multiaddr
		for _, s := range ss {
			out = append(out, ma.StringCast(s))
		}
		return out
	}
	const (
		loopback = "/ip4/127.0.0.1/tcp/3001"
		private  = "/ip4/10.0.0.2/tcp/3001"
		private6 = "/ip6/fd00::2/tcp/3001"
		public   = "/ip4/1.2.3.4/tcp/3001"
		dns      = "/dns4/relay.example.org/tcp/3001"
	)
	all := addrs(loopback, private, "/ip4/0.0.0.0/tcp/3001", public, "/ip4/1.2.3.4/udp/3001/quic-v1",
		public, private6, "/ip4/1.2.3.4/tcp/4001/p2p/12D3KooWL8ty3o7xCtKkLuiBdGKsmqpCWn4iBhM5w8Qey3HC3Tbv", dns)
	for _, tc := range []struct {
		requester string
		want      []ma.Multiaddr
	}{
		{"/ip4/127.0.0.1/tcp/50000", addrs(loopback, private, public, private6, dns)},
		{"/ip4/10.0.0.9/tcp/50000", addrs(private, public, private6, dns)},
		{"/ip4/192.168.1.9/tcp/50000", addrs(private, public, private6, dns)},
		{"/ip4/5.6.7.8/tcp/50000", addrs(public, dns)},
	} {
		got := shareable(all, scopeOf(ma.StringCast(tc.requester)))
		if len(got) != len(tc.want) {
			t.Fatalf("to %s: shared %v, want %v", tc.requester, got, tc.want)
		}
		for i := range got {
			if !got[i].Equal(tc.want[i]) {
				t.Fatalf("to %s: shared %v, want %v", tc.requester, got, tc.want)
			}
		}
	}
}
