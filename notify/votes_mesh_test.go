package notify_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/metricstest"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/leios/protocolset"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/notify"
)

// voteHost is a libp2p host on loopback running LeiosNotify, counting the
// vote copies its sessions send and receive (a prototype message carries
// several, a CIP one one).
type voteHost struct {
	host           *network.Host
	relay          *notify.Relay
	metrics        *prometheus.Registry // the host's
	sent, received atomic.Int64
}

func startVoteHost(t *testing.T, n *testNet, seed byte, set protocolset.Set, topology []string) *voteHost {
	t.Helper()
	vh := &voteHost{relay: n.relay(t), metrics: prometheus.NewRegistry()}
	svc, err := notify.NewService(notify.ServiceOptions{Relay: vh.relay, Protocols: set})
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, ed25519.SeedSize)
	key[0], key[1] = seed, 0x77
	vh.host, err = network.NewHost(network.HostOptions{
		Key:         ed25519.NewKeyFromSeed(key),
		ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"},
		Topology:    topology,
		Services:    []network.Service{svc},
		MinBackoff:  50 * time.Millisecond,
		MaxBackoff:  400 * time.Millisecond,
		Logger:      quietLogger(),
		Registerer:  vh.metrics,
		OnMessage: func(_ peer.ID, dir protocol.Direction, m protocol.Message, _ int) {
			copies := 0
			switch m := m.(type) {
			case *notify.MsgVotes:
				copies = len(m.Votes)
			case *notify.MsgLeiosVote:
				copies = 1
			}
			if dir == protocol.Sent {
				vh.sent.Add(int64(copies))
			} else {
				vh.received.Add(int64(copies))
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- vh.host.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := waittest.Recv(t, done, fmt.Sprintf("host %d stopped", seed)); err != nil {
			t.Errorf("host %d: %v", seed, err)
		}
	})
	return vh
}

// TestVoteMeshSendsEachVoteOnce: in a mesh of three, a vote one node casts
// reaches the other two, and no node sends it back to the peer it came
// from: the caster sends it to both peers, and each of them to its one
// other peer, four copies in all (six when each relayed it to every peer).
func TestVoteMeshSendsEachVoteOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  protocolset.Set
	}{
		{"cip", protocolset.CIP},
		{"prototype", protocolset.Prototype},
	} {
		t.Run(tc.name, func(t *testing.T) { voteMesh(t, tc.set) })
	}
}

func voteMesh(t *testing.T, set protocolset.Set) {
	n := newTestNet(t, 1)
	a := startVoteHost(t, n, 1, set, nil)
	b := startVoteHost(t, n, 2, set, a.host.P2PAddrs())
	c := startVoteHost(t, n, 3, set, append(a.host.P2PAddrs(), b.host.P2PAddrs()...))
	hosts := []*voteHost{a, b, c}
	e := newEB(t, 1, 2)
	h := n.header(slotsPast-5, 0, e.announcement(), 0)
	for _, vh := range hosts {
		if err := vh.relay.Announce(h); err != nil {
			t.Fatal(err)
		}
	}
	// Every vote stream up before the vote, so each copy is a relay's, not
	// a stream's catch-up.
	served := `leiosnode_network_served_streams{protocol="` + notify.VotesSpec().Label() + `"}`
	if set == protocolset.Prototype {
		served = `leiosnode_network_served_streams{protocol="` + notify.Spec().Label() + `"}`
	}
	for _, vh := range hosts {
		waittest.Until(t, "a full mesh serving votes", func() bool {
			return metricstest.Values(t, vh.metrics)[served] >= 2
		})
	}

	vote := block.Vote{RbHash: h.Hash(), VoterSeat: 0, Signature: fillSig(9)}
	if _, err := a.relay.Votes([]block.Vote{vote}); err != nil {
		t.Fatal(err)
	}
	// Quiet once every node took the vote (its pushes done: Relayed counts
	// after them), every copy queued was sent, and every copy sent arrived.
	var queued, sent, received int64
	waittest.Until(t, "the vote relayed everywhere and every copy delivered", func() bool {
		queued, sent, received = 0, 0, 0
		for _, vh := range hosts {
			vs := vh.relay.VoteStats()
			if vs.Relayed != 1 {
				return false
			}
			queued += int64(vs.Queued)
			sent += vh.sent.Load()
			received += vh.received.Load()
		}
		return sent == queued && received == sent
	})
	const needed = 4 // two from the caster, then one across between the others
	if sent != needed {
		t.Fatalf("%d vote copies sent (a %d, b %d, c %d), want %d", sent, a.sent.Load(), b.sent.Load(), c.sent.Load(), needed)
	}
	if a.sent.Load() != 2 {
		t.Fatalf("the caster sent %d copies, want one to each peer", a.sent.Load())
	}
	for _, vh := range hosts {
		if got := vh.relay.VotesFor(h.Hash()); len(got) != 1 || got[0] != vote {
			t.Fatalf("relay holds %v, want the vote", got)
		}
	}
}
