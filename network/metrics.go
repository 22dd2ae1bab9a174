package network

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/network/protocol"
)

// metrics are the host's Prometheus collectors. They always exist, so the
// code counts unconditionally; they are registered only when a Registerer is
// given.
type metrics struct {
	messages   *prometheus.CounterVec // protocol, direction
	bytes      *prometheus.CounterVec // protocol, direction
	violations *prometheus.CounterVec // protocol, kind
	bans       prometheus.Counter
	refused    prometheus.Counter
	limits     *prometheus.CounterVec // limit
	// serveWaited is the time served frames waited for the serve budget,
	// by scope; servedStreams the streams being served, by protocol;
	// serveHeld the bytes the servers hold for their answers.
	serveWaited   *prometheus.CounterVec
	servedStreams *prometheus.GaugeVec
	serveHeld     prometheus.Gauge
	useless       *prometheus.CounterVec // what
}

func newMetrics() *metrics {
	return &metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leiosnode_network_messages_total",
			Help: "Mini-protocol messages, by protocol and direction.",
		}, []string{"protocol", "direction"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leiosnode_network_message_bytes_total",
			Help: "Mini-protocol message bytes, by protocol and direction.",
		}, []string{"protocol", "direction"}),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leiosnode_network_violations_total",
			Help: "Protocol violations by peers, by protocol and kind.",
		}, []string{"protocol", "kind"}),
		bans: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "leiosnode_network_bans_total",
			Help: "Peers disconnected and gated for repeated violations.",
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "leiosnode_network_refused_connections_total",
			Help: "Dials and connections refused because the peer is banned.",
		}),
		limits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leiosnode_network_limit_refusals_total",
			Help: "Connections and streams refused because a peer, or all of them, reached a limit, by limit: each attempt once, so a peer that redials is counted per attempt.",
		}, []string{"limit"}),
		serveWaited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leiosnode_network_serve_wait_seconds_total",
			Help: "Time served frames waited for the bytes a peer (scope peer) or all peers (scope total) may be sent a second, and answers for the bytes the servers may hold (scope held).",
		}, []string{"scope"}),
		serveHeld: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "leiosnode_network_serve_held_bytes",
			Help: "Bytes the servers hold for answers being read from the stores and written, of the bound HostOptions.ServeBytesHeld sets.",
		}),
		useless: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leiosnode_network_useless_total",
			Help: "Messages and requests from peers that did the node no good (data not held, points below the immutable tip), by what; each counts against its peer's budget.",
		}, []string{"what"}),
		servedStreams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "leiosnode_network_served_streams",
			Help: "Mini-protocol streams peers have open to this node's servers, by protocol.",
		}, []string{"protocol"}),
	}
}

// register registers the collectors, with a gauge of the connected peers.
func (m *metrics) register(reg prometheus.Registerer, peers func() int) error {
	connected := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "leiosnode_network_peers",
		Help: "Connected peers.",
	}, func() float64 { return float64(peers()) })
	for _, c := range []prometheus.Collector{m.messages, m.bytes, m.violations, m.bans, m.refused, m.limits, m.serveWaited, m.servedStreams, m.serveHeld, m.useless, connected} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// violationKind names the engine's sentinel err wraps, for the kind label.
func violationKind(err error) string {
	for _, k := range []struct {
		err  error
		name string
	}{
		{protocol.ErrAgency, "agency"},
		{protocol.ErrUnexpectedMessage, "unexpected_message"},
		{protocol.ErrMessageTooLarge, "too_large"},
		{protocol.ErrMalformed, "malformed"},
		{protocol.ErrTimeout, "timeout"},
		{protocol.ErrSlowReader, "slow_reader"},
		{ErrWasteful, "wasteful"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "protocol"
}

func directionLabel(dir protocol.Direction) string {
	if dir == protocol.Sent {
		return "sent"
	}
	return "received"
}
