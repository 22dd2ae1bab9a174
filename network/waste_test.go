package network_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	libp2pnetwork "github.com/libp2p/go-libp2p/core/network"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
	"github.com/leiosnode/leiosnode/network/internal/ping"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// uselessService answers pings, each charged to the peer as a useless
// request, as a server charges a request for data it does not hold.
type uselessService struct{}

func (uselessService) Name() string { return "ping" }

func (uselessService) Servers() []network.Server {
	return []network.Server{{Spec: ping.Spec(time.Second, 0), Serve: func(ctx context.Context, s *protocol.Session) error {
		for {
			msg, err := s.Recv(ctx)
			if err != nil {
				return err
			}
			m, ok := msg.(*ping.MsgPing)
			if !ok {
				return nil
			}
			if err := network.RemotePeer(ctx).Waste(1, "test"); err != nil {
				return err
			}
			if err := s.Send(&ping.MsgPong{N: m.N}); err != nil {
				return err
			}
		}
	}}}
}

func (uselessService) RunClient(context.Context, *network.Peer) error { return network.ErrNoClient }

// A peer whose requests are all useless is served while its budget covers
// them; past it each is a violation that ends its stream, counted once,
// and three get it banned. Its violations are logged a few times, not
// once per request.
func TestUselessRequestsSpendThePeersBudget(t *testing.T) {
	victim := hosttest.Start(t, 31, nil, func(o *network.HostOptions) {
		o.Services = []network.Service{uselessService{}}
		o.WastePerSecond, o.WasteBurst = 1, 5
		o.BanDuration = time.Minute
	})
	attacker := hosttest.Raw(t, 0)
	if err := hosttest.Connect(t, attacker, victim); err != nil {
		t.Fatal(err)
	}
	pingID := libp2pprotocol.ID(ping.Spec(0, 0).ID())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	served, refused := 0, 0
	for refused < 3 {
		s, err := attacker.NewStream(ctx, victim.ID(), pingID)
		if err != nil {
			break // banned
		}
		for n := uint64(0); ; n++ {
			if err := pingOnce(s, n); err != nil {
				refused++
				break
			}
			served++
		}
		_ = s.Reset()
		hosttest.Eventually(t, "the refusal is counted", func() bool {
			return hosttest.Metric(t, victim.Reg, "leiosnode_network_violations_total", map[string]string{"kind": "wasteful"}) == float64(refused)
		})
	}
	if served < 5 || served > 7 {
		t.Errorf("%d useless requests served, want the budget's 5 (and what refilled meanwhile)", served)
	}
	hosttest.Eventually(t, "the peer is banned", func() bool {
		return attacker.Network().Connectedness(victim.ID()) != libp2pnetwork.Connected && len(victim.Peers()) == 0
	})
	if got := hosttest.Metric(t, victim.Reg, "leiosnode_network_bans_total", nil); got != 1 {
		t.Errorf("%v bans, want 1", got)
	}
	if got := hosttest.Metric(t, victim.Reg, "leiosnode_network_useless_total", map[string]string{"what": "test"}); got < float64(served+3) {
		t.Errorf("useless_total %v, want at least %d", got, served+3)
	}
	if logs := victim.Logs.String(); strings.Count(logs, `msg="protocol violation"`) != 3 || !strings.Contains(logs, network.ErrWasteful.Error()) {
		t.Errorf("want three violations logged, each naming the budget:\n%s", logs)
	}
}

// A budget refills at its rate up to its burst, and refuses what it does
// not cover without taking it. On virtual time.
func TestWasteBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := network.NewWasteBudget(10, 100)
		if err := b.Spend(100, "stale"); err != nil {
			t.Fatal(err)
		}
		if err := b.Spend(1, "stale"); !errors.Is(err, network.ErrWasteful) || !protocol.IsViolation(err) || !strings.Contains(err.Error(), "stale") {
			t.Fatalf("past the burst: %v, want ErrWasteful naming what", err)
		}
		time.Sleep(time.Second)
		if err := b.Spend(10, "stale"); err != nil {
			t.Fatalf("a second later: %v", err)
		}
		if err := b.Spend(1, "stale"); err == nil {
			t.Fatal("spent more than refilled")
		}
		time.Sleep(time.Hour)
		if err := b.Spend(101, "stale"); err == nil {
			t.Fatal("refilled past the burst")
		}
	})
}
