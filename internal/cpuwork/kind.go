package cpuwork

import (
	"context"
	"runtime/pprof"
)

// LabelKey is the pprof label key a goroutine's kind of work goes under.
const LabelKey = "work"

// Kind is a kind of work the node's CPU does: the value of the work label.
type Kind string

// The kinds of work. The Sampler counts every sample in exactly one.
const (
	// Intake admits txs into the mempool: decoding and full validation,
	// signatures included.
	Intake Kind = "intake"
	// TxSubmission is the tx-submission protocol's own work.
	TxSubmission Kind = "txsubmission"
	// MempoolSync revalidates the mempool on a tip change.
	MempoolSync Kind = "mempool-sync"
	// Fetch is LeiosFetch: client, server, the fetch decisions, and storing
	// the EB bodies and txs it fetched.
	Fetch Kind = "fetch"
	// Notify is LeiosNotify: announcements, and relaying votes with their
	// checks.
	Notify Kind = "notify"
	// ClosureValidation applies an EB's closure on the ledger before
	// voting.
	ClosureValidation Kind = "closure-validation"
	// Voting builds and signs this node's vote.
	Voting Kind = "voting"
	// Forge is the leader check, tx selection, block building and
	// certificates.
	Forge Kind = "forge"
	// Chain is chain sync, block fetch, adding and applying blocks, and
	// chain selection.
	Chain Kind = "chain"
	// Store is Pebble's background work: flushes, compactions, WAL syncs,
	// deleting obsolete files. The sampler finds it by its stack or
	// Pebble's own label, never by the work label.
	Store Kind = "store"
	// API is the HTTP API, but for tx submission (Intake).
	API Kind = "api"
	// Network is libp2p's internals: yamux, noise, the swarm, identify.
	Network Kind = "network"
	// GC is Go's background garbage collection workers. GC assists stay
	// with the goroutine that allocated, as the runtime charges them.
	GC Kind = "gc"
	// Other is everything else: unlabelled work, and unknown labels.
	Other Kind = "other"
)

// Kinds are all the kinds of work, in a fixed order.
func Kinds() []Kind {
	return []Kind{Intake, TxSubmission, MempoolSync, Fetch, Notify, ClosureValidation, Voting,
		Forge, Chain, Store, API, Network, GC, Other}
}

// labelSets is each kind's label set, built once: Do is on hot paths
// (every tx admitted), and pprof.Labels allocates. Never written after
// init.
var labelSets = func() map[Kind]pprof.LabelSet {
	sets := make(map[Kind]pprof.LabelSet)
	for _, k := range Kinds() {
		sets[k] = pprof.Labels(LabelKey, string(k))
	}
	return sets
}()

// labels is k's label set. An unknown kind is labelled as given, so a
// profile shows what the caller said; the Sampler counts it as other.
func labels(k Kind) pprof.LabelSet {
	if set, ok := labelSets[k]; ok {
		return set
	}
	return pprof.Labels(LabelKey, string(k))
}

// known reports whether k is one of Kinds.
func known(k Kind) bool {
	_, ok := labelSets[k]
	return ok
}

// Do runs f with the calling goroutine labelled k, and restores its labels
// when f returns. f's context carries the label, and goroutines f starts
// inherit it. A label k replaces a work label ctx already carries; other
// labels stay.
func Do(ctx context.Context, k Kind, f func(context.Context)) {
	pprof.Do(ctx, labels(k), f)
}

// Context returns ctx carrying the label k. A context's labels label
// nothing by themselves: a goroutine applies them with Do, pprof.Do or
// pprof.SetGoroutineLabels, and the goroutines it then starts inherit
// them. Inheritance follows the goroutine that runs the go statement, not
// the context passed along: a goroutine started from an unlabelled one is
// unlabelled whatever context it is given, until it applies one.
func Context(ctx context.Context, k Kind) context.Context {
	return pprof.WithLabels(ctx, labels(k))
}
