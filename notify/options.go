package notify

import (
	"errors"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Options configure a Relay. Zero values take the documented defaults.
type Options struct {
	// ValidateHeader checks an announced header's issuer, VRF and signature:
	// consensus.Validator.ValidateHeader. Required.
	ValidateHeader func(*block.Header) error
	// Clock is the network's slot clock. A header whose slot starts more
	// than MaxClockSkew after Now is from the future. Required.
	Clock        consensus.Clock
	MaxClockSkew time.Duration
	// Now is the wall clock. Default time.Now.
	Now func() time.Time
	// ImmutableSlot returns the slot of the immutable tip; headers below it
	// are not relayed. Nil: only the pruned slot (Prune) is the floor.
	ImmutableSlot func() uint64
	// ValidateVotes checks a batch of votes new to the relay — a real seat,
	// a signature that verifies on the network's vote message for
	// subjects[i], what vote i's RB announced — before any is relayed; the
	// committee's batch verification. Nil accepts every seat and signature
	// (tests of the relay alone).
	ValidateVotes func(votes []block.Vote, subjects []block.VoteSubject) error
	// VoteWindow is when votes for an RB are relayed. The zero value relays
	// them at any time.
	VoteWindow VoteWindow
	// VotesPerSecond bounds the votes one peer may hand to the relay's
	// checks per second, in bursts of up to two full messages; the rest are
	// dropped unchecked (VoteStats.Shed). An honest peer relays each seat's
	// vote once per RB: a committee of 500 with an RB every 20 s is 25 a
	// second. Default 1000.
	VotesPerSecond int

	// The node's sinks for what peers send, called by each peer's client in
	// the order the peer sent it, concurrently across peers. They must not
	// block for long: the peer's stream waits on them. Nil: ignored.
	//
	// OnAnnouncement gets each header new to this relay, after it passed
	// Announce (so it is valid and already queued to every other peer).
	OnAnnouncement func(from peer.ID, h *block.Header)
	// OnBlockOffer: the peer holds the EB body of p, ebSize bytes.
	OnBlockOffer func(from peer.ID, p block.Point, ebSize uint64)
	// OnBlockTxsOffer: the peer holds the whole closure of p.
	OnBlockTxsOffer func(from peer.ID, p block.Point)
	// OnVotes gets the votes new to this relay, after they passed Votes.
	OnVotes func(from peer.ID, votes []block.Vote)

	// MaxQueue bounds one served peer's FIFO, in notifications; a peer that
	// lets it fill up is dropped (ErrSlowPeer) and catches up when it
	// reconnects. It must exceed a catch-up (about three notifications per
	// volatile EB, plus the vote batches), or a reconnecting peer is dropped
	// again at once. Default 16384.
	MaxQueue int

	// KeepAlive is how long a client waits with nothing from the server
	// before it ends its stream (ErrQuiet), for the host to open a new one:
	// within Busy's timeout, so a server with no news is never taken for a
	// stuck one. Default protocol.KeepAlive (90 s).
	KeepAlive time.Duration

	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.ValidateHeader == nil {
		return o, errors.New("notify: Options.ValidateHeader is required")
	}
	if o.Clock.SlotLength <= 0 {
		return o, errors.New("notify: Options.Clock is required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ImmutableSlot == nil {
		o.ImmutableSlot = func() uint64 { return 0 }
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = 16384
	}
	if o.VotesPerSecond <= 0 {
		o.VotesPerSecond = 1000
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = protocol.KeepAlive
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

// VoteWindow is when a vote for an RB of slot s is relayed: from slot
// s+From through slot s+Through, as this node's clock tells, widened by
// the clock skew either side. Through = 0 means no bound.
type VoteWindow struct {
	From, Through uint64
}

// admits reports whether a vote for an RB of rbSlot is relayed at slot now.
func (w VoteWindow) admits(rbSlot, now, skew uint64) bool {
	if w.Through == 0 {
		return true
	}
	return now+skew >= rbSlot+w.From && now <= rbSlot+w.Through+skew
}
