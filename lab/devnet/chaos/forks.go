package chaos

import (
	"sync"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
)

// ForkSeen is a rollback a node's polls showed: its tip of one poll was no
// longer on its chain at the next.
type ForkSeen struct {
	Node string             `json:"node"`
	At   time.Time          `json:"at"` // when the poll that showed it started
	From apitypes.TipStatus `json:"from"`
	To   apitypes.TipStatus `json:"to"`
	// Depth is how many blocks the node rolled back: from From down to the
	// last block both polls' recent blocks share. AtLeast says they share
	// none, so it rolled back Depth blocks or more.
	Depth   uint64 `json:"depth"`
	AtLeast bool   `json:"atLeast,omitempty"`
}

// ForkWatch finds the rollbacks in the nodes' statuses, from the polls of
// the supervisor and of the chaos scheduler, which it may get at once.
//
// A node does not count its rollbacks, so they are inferred: between two
// polls of one node process, a tip that is no longer among the new poll's
// recent blocks (the chain's last apitypes.RecentBlockCount) was rolled back.
// A fork that comes and goes between two polls is not seen; a node
// restarted is compared with its new process's polls only.
type ForkWatch struct {
	names []string
	mu    sync.Mutex
	last  []polled // by node; the zero value when none since its start
	forks []ForkSeen
}

type polled struct {
	at     time.Time
	status *apitypes.Status
}

func newForkWatch(names []string) *ForkWatch {
	return &ForkWatch{names: names, last: make([]polled, len(names))}
}

// observe takes a round of polls started at at. A round older than one
// already taken for a node is ignored for it.
func (w *ForkWatch) Observe(at time.Time, polls []apiclient.StatusPoll) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, p := range polls {
		if p.Status == nil || at.Before(w.last[i].at) {
			continue
		}
		if prev := w.last[i].status; prev != nil {
			if depth, atLeast, ok := rolledBack(prev, p.Status); ok {
				w.forks = append(w.forks, ForkSeen{Node: w.names[i], At: at, From: prev.Tip, To: p.Status.Tip, Depth: depth, AtLeast: atLeast})
			}
		}
		w.last[i] = polled{at: at, status: p.Status}
	}
}

// restarted forgets node i's last poll: its new process's chain is not
// compared with the old one's (the kill's report entry does that).
func (w *ForkWatch) restarted(i int, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last[i] = polled{at: at}
}

// seen are the rollbacks found so far, in the order found.
func (w *ForkWatch) Seen() []ForkSeen {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]ForkSeen(nil), w.forks...)
}

// rolledBack says whether a node whose status was prev and then cur rolled
// back meanwhile, and how deep. Only when cur's recent blocks reach down to
// prev's tip can it tell: a node that moved on further between two polls
// is taken to have extended its chain.
func rolledBack(prev, cur *apitypes.Status) (depth uint64, atLeast, ok bool) {
	from := prev.Tip
	if from.Hash == "" || cur.Tip == from {
		return 0, false, false
	}
	lowest := cur.Tip.BlockNumber
	onCur := map[uint64]string{cur.Tip.BlockNumber: cur.Tip.Hash}
	for _, b := range cur.RecentBlocks {
		onCur[b.BlockNumber] = b.Hash
		lowest = min(lowest, b.BlockNumber)
	}
	if from.BlockNumber < lowest {
		return 0, false, false // the new chain's window does not reach back to it
	}
	if onCur[from.BlockNumber] == from.Hash {
		return 0, false, false // extended
	}
	// The last block both hold: prev's tip and recent blocks are its chain.
	onPrev := append([]apitypes.TipStatus{from}, prev.RecentBlocks...)
	var shared uint64
	found := false
	for _, b := range onPrev {
		if h, ok := onCur[b.BlockNumber]; ok && h == b.Hash && b.BlockNumber >= shared {
			shared, found = b.BlockNumber, true
		}
	}
	if !found {
		oldest := from.BlockNumber
		for _, b := range onPrev {
			oldest = min(oldest, b.BlockNumber)
		}
		return from.BlockNumber - oldest + 1, true, true
	}
	return from.BlockNumber - shared, false, true
}
