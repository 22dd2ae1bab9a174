package txsubmission_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// startHost runs a host on loopback with tx submission over mempool until
// the test ends.
func startHost(t *testing.T, seed byte, mempool *memMempool, topology []string, configure ...func(*network.HostOptions)) *hosttest.Node {
	t.Helper()
	withTxSubmission := func(o *network.HostOptions) {
		svc, err := txsubmission.NewService(txsubmission.ServiceOptions{Mempool: mempool})
		if err != nil {
			t.Fatal(err)
		}
		o.Services = []network.Service{svc}
	}
	return hosttest.Start(t, seed, topology, append([]func(*network.HostOptions){withTxSubmission}, configure...)...)
}

// TestOverLibp2p: two hosts on loopback, one dialing the other; txs added at
// either reach the other, over the stream each opens toward the other.
func TestOverLibp2p(t *testing.T) {
	w := newWallet(2)
	a, b := newMempool(w.genesis()), newMempool(w.genesis())
	hostA := startHost(t, 1, a, nil)
	startHost(t, 2, b, hostA.P2PAddrs())
	fromA, fromB := w.txs(t, 0, 20), w.txs(t, 1, 20)
	for i := range 20 {
		a.mustAdd(t, fromA[i])
		b.mustAdd(t, fromB[i])
	}
	all := append(append([]*ledger.Tx(nil), fromA...), fromB...)
	eventually(t, "both hold every tx", func() bool { return a.holdsAll(all) && b.holdsAll(all) })
	for _, tx := range all {
		if a.served(tx.Hash())+b.served(tx.Hash()) != 1 {
			t.Fatalf("tx %x served %d + %d times, want once", tx.Hash(), a.served(tx.Hash()), b.served(tx.Hash()))
		}
	}
}

// TestInvalidPeerDisconnected: a peer whose mempool serves invalid txs is
// cut off after the threshold: the violation disconnects and gates it at
// once, whatever the host's MaxViolations.
func TestInvalidPeerDisconnected(t *testing.T) {
	w := newWallet(1)
	bad := newMempool(w.genesis())
	bad.unchecked = true
	forged := w.forged(t, 0, 11)
	bad.mustAdd(t, forged...)
	victim := newMempool(w.genesis())
	victimHost := startHost(t, 1, victim, nil, func(o *network.HostOptions) {
		o.MaxViolations = 100
		o.BanDuration = time.Minute
	})
	startHost(t, 2, bad, victimHost.P2PAddrs())
	eventually(t, "the victim bans the peer", func() bool { return strings.Contains(victimHost.Logs.String(), "peer disconnected and banned") })
	if !strings.Contains(victimHost.Logs.String(), "too many invalid txs") {
		t.Fatalf("the violation logged is not the invalid txs:\n%s", victimHost.Logs.String())
	}
	eventually(t, "the peer is disconnected", func() bool { return len(victimHost.Peers()) == 0 })
	if victim.len() != 0 {
		t.Fatalf("victim admitted %d forged txs", victim.len())
	}
	time.Sleep(300 * time.Millisecond) // the peer keeps redialing
	if n := len(victimHost.Peers()); n != 0 {
		t.Fatalf("banned peer reconnected (%d peers)", n)
	}
}
