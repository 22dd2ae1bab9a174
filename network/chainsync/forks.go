package chainsync

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
)

// ErrForkTooDeep is wrapped by a DeepFork. It is not a violation: a peer
// that was partitioned from us and forged on serves one honestly.
var ErrForkTooDeep = errors.New("chainsync: the peer's chain forks from ours deeper than k")

// DefaultForkRecheck is how long a client waits before it asks again for an
// intersection with a peer whose chain forked from ours deeper than k.
const DefaultForkRecheck = time.Minute

// DeepFork is a peer's chain that forks from ours before our immutable
// tip: neither chain can be switched to the other, the longest-chain rule
// notwithstanding. The client does not follow it (nothing to fetch), and
// asks again after ForkRecheck, in case either chain has changed.
type DeepFork struct {
	Ours, Immutable block.Tip // our tip and immutable tip
	Theirs          block.Tip // the peer's tip
}

func (f *DeepFork) Error() string {
	return fmt.Sprintf("%v: our tip %s, immutable tip %s; the peer's tip %s", ErrForkTooDeep, f.Ours, f.Immutable, f.Theirs)
}

func (f *DeepFork) Unwrap() error { return ErrForkTooDeep }

// ForkStatus is what chain sync knows of how its peers' chains join ours.
type ForkStatus struct {
	// DeepForks counts the peers found on a chain that forks from ours
	// deeper than k, each once until its chain joins ours again.
	DeepForks uint64
	// Forked are the peers whose chain does so now, with their tips.
	Forked map[peer.ID]block.Tip
	// Stranded: every peer chain sync has intersected with is on a deep
	// fork, and at least one is. Then it is this node's own chain that
	// cannot join the others: its database must go, and the node resync.
	Stranded bool
}

// forkWatch follows, for the clients running, whether each peer's chain
// joins ours; it warns once per peer of a deep fork, and once when every
// peer's does.
type forkWatch struct {
	log *slog.Logger

	mu       sync.Mutex // guards the fields below; never held while logging
	peers    map[peer.ID]*DeepFork
	warned   map[peer.ID]bool // until the peer's chain joins ours again
	deep     uint64
	stranded bool
}

// maxWarned bounds the peers remembered as warned of; past it they are
// forgotten and may be warned of again.
const maxWarned = 1024

func newForkWatch(log *slog.Logger) *forkWatch {
	return &forkWatch{log: log, peers: make(map[peer.ID]*DeepFork), warned: make(map[peer.ID]bool)}
}

// report notes what the client toward id found: a deep fork, or (nil) a
// chain that joins ours.
func (w *forkWatch) report(id peer.ID, fork *DeepFork) {
	w.mu.Lock()
	w.peers[id] = fork
	first := fork != nil && !w.warned[id]
	switch {
	case fork == nil:
		delete(w.warned, id)
	case first:
		if len(w.warned) >= maxWarned {
			clear(w.warned)
		}
		w.warned[id] = true
		w.deep++
	}
	stranded, was := w.strandedLocked(), w.stranded
	w.stranded = stranded
	w.mu.Unlock()

	switch {
	case first:
		w.log.Warn("the peer's chain forks from ours deeper than k: not following it", "peer", id,
			"ourTip", fork.Ours.String(), "ourImmutableTip", fork.Immutable.String(), "peerTip", fork.Theirs.String())
	case fork != nil:
		w.log.Debug("the peer's chain still forks from ours deeper than k", "peer", id, "peerTip", fork.Theirs.String())
	}
	switch {
	case stranded && !was:
		w.log.Warn("every peer's chain forks from ours deeper than k: this node's chain cannot join theirs; " +
			"stop the node, delete its database and start it again to resync")
	case was && !stranded:
		w.log.Info("a peer's chain joins ours again")
	}
}

// gone forgets id, whose client ended.
func (w *forkWatch) gone(id peer.ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.peers, id)
	w.stranded = w.strandedLocked()
}

// strandedLocked: at least one peer, and every one, on a deep fork. mu is
// held.
func (w *forkWatch) strandedLocked() bool {
	for _, f := range w.peers {
		if f == nil {
			return false
		}
	}
	return len(w.peers) > 0
}

func (w *forkWatch) status() ForkStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := ForkStatus{DeepForks: w.deep, Forked: make(map[peer.ID]block.Tip), Stranded: w.strandedLocked()}
	for id, f := range w.peers {
		if f != nil {
			st.Forked[id] = f.Theirs
		}
	}
	return st
}
