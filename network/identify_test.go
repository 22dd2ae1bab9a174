package network_test

import (
	"testing"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
)

// TestAgentVersion: a peer learns the host's AgentVersion through libp2p
// identify, as the operators of other nodes see it.
func TestAgentVersion(t *testing.T) {
	const agent = "leiosnode/v0.0.0-test"
	n := hosttest.Start(t, 1, nil, func(o *network.HostOptions) { o.AgentVersion = agent })
	peer := hosttest.Raw(t, 0)
	if err := hosttest.Connect(t, peer, n); err != nil {
		t.Fatal(err)
	}
	var seen any
	hosttest.Eventually(t, "the peer has identified the host", func() bool {
		v, err := peer.Peerstore().Get(n.ID(), "AgentVersion")
		seen = v
		return err == nil
	})
	if seen != agent {
		t.Errorf("the peer sees agent %q, want %q", seen, agent)
	}
}
