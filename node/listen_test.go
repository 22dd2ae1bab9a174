package node

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/internal/waittest"
)

// TestAddressInUseFailsNew: every listener is bound by New, so an address
// in use — the HTTP one, or the libp2p one of a node already running —
// fails New, naming the setting, before any node says it started; and New
// releases what it had bound.
func TestAddressInUseFailsNew(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	configs := testNet(t, 2, 100*time.Millisecond)

	held, err := net.Listen("tcp", configs[0].HTTPAddr)
	must(t, err)
	if _, err := New(configs[0], Options{Logger: quietLogger()}); err == nil ||
		!strings.Contains(err.Error(), "httpAddr "+configs[0].HTTPAddr+": ") || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("New with its HTTP address in use: %v", err)
	}
	held.Close()

	// The failed New let go of its libp2p address: a node now starts on it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	first, err := New(configs[0], Options{Logger: quietLogger()})
	must(t, err)
	g.Go(func() error { return first.Run(gctx) })

	configs[1].ListenAddrs = configs[0].ListenAddrs
	if _, err := New(configs[1], Options{Logger: quietLogger()}); err == nil ||
		!strings.Contains(err.Error(), "listenAddrs "+configs[0].ListenAddrs[0]+": ") || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("New with its libp2p address in use by another node: %v", err)
	}
	cancel()
	must(t, g.Wait())
}

// TestStatusPeers: /status lists each connected peer with its ID, the
// address of its connection, who dialed and since when.
func TestStatusPeers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	configs := testNet(t, 2, 100*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	var ids []string
	for _, cfg := range configs {
		n, err := New(cfg, Options{Logger: quietLogger()})
		must(t, err)
		ids = append(ids, n.host.ID().String())
		g.Go(func() error { return n.Run(gctx) })
	}
	waitHTTP(t, configs[0].HTTPAddr)
	type peerJSON struct {
		ID        string `json:"id"`
		Addr      string `json:"addr"`
		Direction string `json:"direction"`
		Since     string `json:"since"`
	}
	var peers []peerJSON
	for start := time.Now(); len(peers) != 1; {
		if time.Since(start) > waittest.Hang {
			t.Fatalf("node 0 lists peers %+v after %v, a hang; want node 1", peers, waittest.Hang)
		}
		time.Sleep(100 * time.Millisecond)
		resp, err := http.Get("http://" + configs[0].HTTPAddr + "/status")
		must(t, err)
		var st struct {
			Peers []peerJSON `json:"peers"`
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		must(t, err)
		peers = st.Peers
	}
	p := peers[0]
	since, err := time.Parse(time.RFC3339, p.Since)
	if p.ID != ids[1] || !strings.HasPrefix(p.Addr, "/ip4/127.0.0.1/tcp/") || (p.Direction != "inbound" && p.Direction != "outbound") ||
		err != nil || time.Since(since) > time.Minute || time.Since(since) < -time.Second {
		t.Fatalf("node 0 lists %+v (since: %v); want node 1 %s, connected just now", p, err, ids[1])
	}
	cancel()
	must(t, g.Wait())
}
