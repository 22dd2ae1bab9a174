package protocol

import "time"

// The waits the mini-protocols' specs are built from, after the Cardano
// node's. Each protocol's spec.go says which state gets which, and why an
// honest peer never runs into it.
const (
	// ShortWait is for an answer due at once: a reply computed from what
	// the peer holds (an intersection, tx ids it has, a roll forward).
	ShortWait = 10 * time.Second
	// LongWait is for an answer that carries blocks or closures, which may
	// take a while to read from disk and to send.
	LongWait = 60 * time.Second
	// KeepAlive is how long a side that holds a request until it has news
	// (chain sync's must reply, LeiosNotify's held requests, a blocking
	// tx-ids request), or keeps a stream open with nothing to ask (LeiosFetch),
	// stays silent before it speaks anyway: a keep-alive answer, or the
	// end of the session, opened again when needed.
	KeepAlive = 90 * time.Second
	// HeldWait is how long the other side waits for a held request: three
	// keep-alives, the longest must-reply timeout the Cardano node draws.
	HeldWait = 269 * time.Second
	// IdleWait is the Cardano node's chain-sync idle timeout: how long a
	// server waits for a client's next request while the client works on
	// what it got (validates, stores, fetches bodies).
	IdleWait = 3673 * time.Second
)
