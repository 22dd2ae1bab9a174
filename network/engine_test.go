package network_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	libp2pnetwork "github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"

	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/internal/hosttest"
	"github.com/leiosnode/leiosnode/network/internal/ping"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// pingService serves the ping protocol, with a 200 ms timeout per state;
// with client set, it also pings every peer once a second.
type pingService struct{ client bool }

func (pingService) Name() string { return "ping" }

func (pingService) Servers() []network.Server {
	return []network.Server{{Spec: ping.Spec(200*time.Millisecond, 0), Serve: ping.Serve}}
}

func (svc pingService) RunClient(ctx context.Context, p *network.Peer) error {
	if !svc.client {
		return network.ErrNoClient
	}
	s, err := p.Open(ctx, svc.Servers()[0].Spec)
	if err != nil {
		return err
	}
	for n := uint64(0); ; n++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		if err := ping.Exchange(ctx, s, n, 1, 1); err != nil {
			return err
		}
	}
}

// specService serves spec with no Serve and no client, for NewHost's
// checks.
type specService struct{ spec *protocol.Spec }

func (svc specService) Name() string { return svc.spec.Name }

func (svc specService) Servers() []network.Server { return []network.Server{{Spec: svc.spec}} }

func (specService) RunClient(context.Context, *network.Peer) error { return network.ErrNoClient }

// TestViolationsCloseStreamAndBanRepeatOffender: each kind of violation
// closes only the stream it happened on and is counted and logged with the
// peer; the third gets the peer disconnected and gated.
func TestViolationsCloseStreamAndBanRepeatOffender(t *testing.T) {
	pingID := libp2pprotocol.ID(ping.Spec(0, 0).ID())
	for _, tc := range []struct {
		kind string
		wire func(t *testing.T) []byte
		// asServer: the attacker sends wire as the server of the streams the
		// victim's client opens, rather than on streams of its own.
		asServer bool
	}{
		{"agency", func(t *testing.T) []byte { return protocoltest.Frames(t, &ping.MsgPong{N: 1}) }, true}, // before the victim pings
		{"unexpected_message", func(t *testing.T) []byte { return protocoltest.Frames(t, &ping.MsgPong{N: 1}) }, false},
		{"too_large", func(t *testing.T) []byte {
			return protocol.AppendFrame(nil, bytes.Repeat([]byte{0x01}, ping.MaxSize+1))
		}, false},
		{"malformed", func(t *testing.T) []byte { return protocol.AppendFrame(nil, []byte{0x82, 0x00, 0xff}) }, false},
		{"timeout", func(t *testing.T) []byte { return []byte{0x05, 0x82} }, false}, // a frame that never completes
	} {
		t.Run(tc.kind, func(t *testing.T) {
			svc := pingService{client: tc.asServer}
			victim := hosttest.Start(t, 1, nil, func(o *network.HostOptions) {
				o.Services = []network.Service{svc}
				o.MaxViolations = 3
				o.BanDuration = time.Minute
			})
			attacker := hosttest.Raw(t, 0)
			if tc.asServer {
				attacker.SetStreamHandler(pingID, func(s libp2pnetwork.Stream) {
					defer s.Reset()
					if _, err := s.Write(tc.wire(t)); err == nil {
						_, _ = io.Copy(io.Discard, s) // until the victim resets it
					}
				})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if err := hosttest.Connect(t, attacker, victim); err != nil {
				t.Fatal(err)
			}

			// An honest stream of the same peer, pinging throughout.
			good, err := attacker.NewStream(ctx, victim.ID(), pingID)
			if err != nil {
				t.Fatal(err)
			}
			defer good.Reset()
			honest := keepPinging(good)

			for i := 1; i <= 3; i++ {
				if !honest.progressed() {
					t.Fatalf("before violation %d, the honest stream stopped", i)
				}
				if i == 3 {
					// End the honest stream properly: left idle, it would
					// time out, and the ban would close it anyway.
					if err := honest.stop(); err != nil {
						t.Fatalf("honest stream: %v", err)
					}
					if _, err := good.Write(protocoltest.Frames(t, &ping.MsgDone{})); err != nil {
						t.Fatal(err)
					}
				}
				if !tc.asServer {
					bad, err := attacker.NewStream(ctx, victim.ID(), pingID)
					if err != nil {
						t.Fatalf("violation %d: %v", i, err)
					}
					if _, err := bad.Write(tc.wire(t)); err != nil {
						t.Fatalf("violation %d: write: %v", i, err)
					}
					// The victim tears the stream down.
					_ = bad.SetReadDeadline(time.Now().Add(5 * time.Second))
					if _, err := io.Copy(io.Discard, bad); errors.Is(err, os.ErrDeadlineExceeded) {
						t.Fatalf("violation %d: stream still open", i)
					}
					_ = bad.Reset()
				} // else the victim's client reopens its stream after a backoff
				hosttest.Eventually(t, "the violation is counted", func() bool {
					return hosttest.Metric(t, victim.Reg, "leiosnode_network_violations_total", map[string]string{"protocol": "ping", "kind": tc.kind}) == float64(i)
				})
			}

			hosttest.Eventually(t, "the offender is disconnected", func() bool {
				return attacker.Network().Connectedness(victim.ID()) != libp2pnetwork.Connected && len(victim.Peers()) == 0
			})
			if got := hosttest.Metric(t, victim.Reg, "leiosnode_network_bans_total", nil); got != 1 {
				t.Fatalf("%v bans, want 1", got)
			}
			// Gated: it cannot open a stream again (its connection is refused
			// once the victim authenticates it).
			redial, cancelRedial := context.WithTimeout(libp2pnetwork.WithForceDirectDial(ctx, "test"), 5*time.Second)
			defer cancelRedial()
			if s, err := attacker.NewStream(redial, victim.ID(), pingID); err == nil {
				_, err = s.Write(protocoltest.Frames(t, &ping.MsgPing{N: 9}))
				if err == nil {
					_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
					_, err = s.Read(make([]byte, 1))
				}
				if err == nil {
					t.Fatal("a banned peer was served")
				}
			}
			if hosttest.Metric(t, victim.Reg, "leiosnode_network_refused_connections_total", nil) == 0 {
				t.Fatal("the gater refused nothing")
			}
			logs := victim.Logs.String()
			if !strings.Contains(logs, "protocol violation") || !strings.Contains(logs, attacker.ID().String()) {
				t.Fatalf("the violation is not logged with the peer ID:\n%s", logs)
			}
		})
	}
}

// pinger runs ping round trips on an honest stream every 20 ms.
type pinger struct {
	done   atomic.Int64 // round trips completed
	quit   chan struct{}
	result chan error
}

func keepPinging(s libp2pnetwork.Stream) *pinger {
	p := &pinger{quit: make(chan struct{}), result: make(chan error, 1)}
	go func() {
		for n := uint64(0); ; n++ {
			select {
			case <-p.quit:
				p.result <- nil
				return
			case <-time.After(20 * time.Millisecond):
			}
			if err := pingOnce(s, n); err != nil {
				p.result <- err
				return
			}
			p.done.Add(1)
		}
	}()
	return p
}

// progressed waits for two more round trips; false if the pinger failed.
func (p *pinger) progressed() bool {
	want := p.done.Load() + 2
	deadline := time.After(5 * time.Second)
	for p.done.Load() < want {
		select {
		case err := <-p.result:
			p.result <- err
			return false
		case <-deadline:
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

// stop ends the pinger and returns its first error.
func (p *pinger) stop() error {
	close(p.quit)
	return <-p.result
}

// pingOnce writes ping n on s and reads back pong n.
func pingOnce(s libp2pnetwork.Stream, n uint64) error {
	var frame []byte
	for _, m := range []protocol.Message{&ping.MsgPing{N: n}, &ping.MsgPong{N: n}} {
		body, err := protocol.Encode(m)
		if err != nil {
			return err
		}
		frame = protocol.AppendFrame(frame, body)
	}
	pingFrame, pongFrame := frame[:len(frame)/2], frame[len(frame)/2:]
	if _, err := s.Write(pingFrame); err != nil {
		return err
	}
	got := make([]byte, len(pongFrame))
	_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(s, got); err != nil {
		return err
	}
	if !bytes.Equal(got, pongFrame) {
		return fmt.Errorf("got % x, want pong %d", got, n)
	}
	return nil
}

// TestBanExpires: once the ban is over, the peer is admitted again.
func TestBanExpires(t *testing.T) {
	victim := hosttest.Start(t, 1, nil, func(o *network.HostOptions) {
		o.Services = []network.Service{pingService{}}
		o.MaxViolations = 1
		o.BanDuration = 500 * time.Millisecond
	})
	attacker := hosttest.Raw(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	target, err := peer.AddrInfoFromString(victim.P2PAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := attacker.Connect(ctx, *target); err != nil {
		t.Fatal(err)
	}
	pingID := libp2pprotocol.ID(ping.Spec(0, 0).ID())
	bad, err := attacker.NewStream(ctx, victim.ID(), pingID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Write(protocoltest.Frames(t, &ping.MsgPong{N: 1})); err != nil {
		t.Fatal(err)
	}
	hosttest.Eventually(t, "the offender is banned", func() bool {
		return hosttest.Metric(t, victim.Reg, "leiosnode_network_bans_total", nil) == 1 && len(victim.Peers()) == 0
	})
	time.Sleep(600 * time.Millisecond)
	hosttest.Eventually(t, "the peer is served again", func() bool {
		dial, cancel := context.WithTimeout(libp2pnetwork.WithForceDirectDial(ctx, "test"), 2*time.Second)
		defer cancel()
		if err := attacker.Connect(dial, *target); err != nil {
			return false
		}
		s, err := attacker.NewStream(dial, victim.ID(), pingID)
		if err != nil {
			return false
		}
		defer s.Reset()
		if _, err := s.Write(protocoltest.Frames(t, &ping.MsgPing{N: 2})); err != nil {
			return false
		}
		want := protocoltest.Frames(t, &ping.MsgPong{N: 2})
		got := make([]byte, len(want))
		_ = s.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = io.ReadFull(s, got)
		return err == nil && bytes.Equal(got, want)
	})
}

func TestNewHostRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts network.HostOptions
	}{
		{"no key", network.HostOptions{}},
		{"bad topology", network.HostOptions{Key: hosttest.Key(1), Topology: []string{"/ip4/127.0.0.1/tcp/1"}}},
		{"invalid spec", network.HostOptions{Key: hosttest.Key(1), Services: []network.Service{
			specService{&protocol.Spec{Name: "broken", Initial: "Nowhere"}},
		}}},
		{"protocol served twice", network.HostOptions{Key: hosttest.Key(1), Services: []network.Service{pingService{}, pingService{}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if h, err := network.NewHost(tc.opts); err == nil {
				_ = h.Close()
				t.Fatal("accepted")
			}
		})
	}
}
