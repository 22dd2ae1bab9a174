package hostile

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network"
)

// Attack names one of the attacks.
type Attack string

const (
	// HTTPUnread: connections that ask for 1 MiB pages of /api/blocks and
	// never read them, more than the API has slots for large answers.
	HTTPUnread Attack = "http-unread"
	// HTTPSlowUpload: submits whose bodies come a few bytes a second,
	// from many addresses, more than the API has upload slots.
	HTTPSlowUpload Attack = "http-slow-upload"
	// CIPJunk: identities that answer the node's grants on the CIP's
	// votes and blocknotify streams with votes and offers for slot 1, below
	// the node's immutable tip, as fast as the grants allow.
	CIPJunk Attack = "cip-junk"
	// CIPViolation: identities that each break one rule once — a message
	// out of turn, the client's request sent by the server — on one of
	// their three CIP streams.
	CIPViolation Attack = "cip-violation"
	// FetchUnread: identities that open every LeiosFetch (both versions)
	// and block-fetch stream the node serves a peer, ask on each for the
	// largest certified closures (pipelined) or the whole chain, and never
	// read. The node serves them; a block it cannot send in its allowance
	// (protocol.ErrSlowReader) ends the stream as the peer's violation.
	FetchUnread Attack = "fetch-unread"
	// FetchNotHeld: identities that ask over LeiosFetch, again and again,
	// for EBs the node does not hold.
	FetchNotHeld Attack = "fetch-not-held"
)

// Attacks are the attacks, in the order the chaos mode lists them.
var Attacks = []Attack{HTTPUnread, HTTPSlowUpload, CIPJunk, CIPViolation, FetchUnread, FetchNotHeld}

// Target is the node attacked and what the attacks need to know of it.
type Target struct {
	Peer     peer.AddrInfo // its libp2p address
	HTTPAddr string        // host:port of its API
	// Limits are the network's EB limits, which the fetch specs carry.
	Limits block.EBLimits
	// Slot is the current slot, for points above the immutable tip.
	Slot func() uint64
	// Closures are certified EBs the node holds, the largest first
	// (FetchUnread asks for them); First and Tip the first and last blocks
	// of its chain (FetchUnread's block-fetch range).
	Closures   []Closure
	First, Tip block.Point
	// MaxBlockBytes bounds a block of its chain, header and body.
	MaxBlockBytes int
}

// Closure is a certified EB: its point and the number of its txs.
type Closure struct {
	Point block.Point
	Txs   int
}

// Tally counts what an attack did; its fields are safe to add to from the
// attack's goroutines and read once Run has returned (or at any time, for
// a progress line).
type Tally struct {
	Identities  atomic.Int64 // fresh libp2p identities connected
	Connections atomic.Int64 // HTTP connections opened
	Streams     atomic.Int64 // streams opened, or served to the node
	Requests    atomic.Int64 // requests sent (HTTP requests, fetch requests)
	Junk        atomic.Int64 // junk votes and offers sent
	Offences    atomic.Int64 // rule breaks committed (CIPViolation)
	// SiblingsClosed counts the offending identities whose other CIP
	// streams the node closed too after the offence.
	SiblingsClosed atomic.Int64
	Cut            atomic.Int64 // connections, streams or identities the node closed or banned
	Refused        atomic.Int64 // HTTP answers 503
	TimedOut       atomic.Int64 // HTTP answers 408
	Failed         atomic.Int64 // dials, stream opens or writes that failed otherwise
}

// Counts are the tally's non-zero counts, by name.
func (t *Tally) Counts() map[string]int64 {
	counts := map[string]int64{}
	for _, c := range []struct {
		name string
		v    *atomic.Int64
	}{
		{"identities", &t.Identities}, {"connections", &t.Connections}, {"streams", &t.Streams},
		{"requests", &t.Requests}, {"junk", &t.Junk}, {"offences", &t.Offences},
		{"siblingsClosed", &t.SiblingsClosed}, {"cut", &t.Cut}, {"refused503", &t.Refused},
		{"timedOut408", &t.TimedOut}, {"failed", &t.Failed},
	} {
		if n := c.v.Load(); n != 0 {
			counts[c.name] = n
		}
	}
	return counts
}

// String spells the non-zero counts, in a fixed order.
func (t *Tally) String() string {
	counts := t.Counts()
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %d", name, counts[name])
	}
	return strings.Join(parts, ", ")
}

// Describe says in a few words what the attack does.
func Describe(a Attack) string {
	switch a {
	case HTTPUnread:
		return fmt.Sprintf("%d connections ask for /api/blocks?from=1&count=181 and never read", unreadConnections)
	case HTTPSlowUpload:
		return fmt.Sprintf("%d addresses upload %d submits each at %d B/s", uploadAddresses, uploadsPerAddress, uploadBytesPerSecond)
	case CIPJunk:
		return fmt.Sprintf("%d identities at a time answer every grant with votes and offers for slot 1", junkIdentities)
	case CIPViolation:
		return "identities one a second each send on blocknotify, once, the client's request, which no server may send"
	case FetchUnread:
		return fmt.Sprintf("%d identities open every fetch/2, fetch/1 and block-fetch stream, ask %d times over for the largest closures or the chain and never read", unreadIdentities, unreadPipelined)
	case FetchNotHeld:
		return fmt.Sprintf("%d identities at a time ask for EBs not held, again and again", notHeldIdentities)
	}
	return string(a)
}

// Streams are the most streams attack a has open to the node at once, or
// the node to it: LeiosFetch and the CIP's notification streams, and
// block fetch, whose server holds a block a stream.
func Streams(a Attack) (fetchOrNotify, blockFetch int) {
	switch a {
	case CIPJunk:
		return junkIdentities * 3, 0
	case CIPViolation:
		return 3, 0
	case FetchUnread:
		return unreadIdentities * 2 * network.DefaultMaxStreams, unreadIdentities * network.DefaultMaxStreams
	case FetchNotHeld:
		return notHeldIdentities * network.DefaultMaxStreams, 0
	}
	return 0, 0
}

// Run runs attack a on t until ctx ends, counting what it does in tally.
// It returns once everything it opened is closed; the error is a failure
// to run the attack at all (nothing to ask for, an unknown attack), never
// the node's refusals, which are what the attack is for.
func Run(ctx context.Context, a Attack, t Target, tally *Tally) error {
	switch a {
	case HTTPUnread:
		return unreadAnswers(ctx, t, tally)
	case HTTPSlowUpload:
		return slowUploads(ctx, t, tally)
	case CIPJunk:
		return cipJunk(ctx, t, tally)
	case CIPViolation:
		return cipViolation(ctx, t, tally)
	case FetchUnread:
		return unreadFetch(ctx, t, tally)
	case FetchNotHeld:
		return notHeld(ctx, t, tally)
	}
	return fmt.Errorf("hostile: no attack %q", a)
}
