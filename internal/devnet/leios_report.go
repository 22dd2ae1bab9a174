package devnet

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/api"
	"github.com/leiosnode/leiosnode/consensus"
)

// LeiosReport is the report's account of EB diffusion, from each node's
// last status and its GET /api/ebs, read just before the nodes stopped.
// An EB counts as forged at the start of its slot (the slot of the RB that
// announced it), so each time includes the forging itself.
type LeiosReport struct {
	Summary LeiosSummary      `json:"summary"`
	Nodes   []LeiosNodeReport `json:"nodes"`
	// EBs are the EBs some node listed, by slot, then hash.
	EBs []EBDiffusion `json:"ebs"`
}

// LeiosSummary sums up EBDiffusion over the EBs. "Every node" means every
// node whose EB list was read: a node that was down at the end is left
// out (and named in Nodes).
type LeiosSummary struct {
	EBsSeen   int `json:"ebsSeen"`   // distinct EBs listed by any node
	NodesRead int `json:"nodesRead"` // nodes whose EB list was read
	// CompleteOnAll counts the EBs whose closure every node holds.
	CompleteOnAll int `json:"completeOnAll"`
	// MedianToLastNodeMs and MaxToLastNodeMs are over those EBs' LastNodeMs;
	// absent when there are none.
	MedianToLastNodeMs *int64 `json:"medianToLastNodeMs,omitempty"`
	MaxToLastNodeMs    *int64 `json:"maxToLastNodeMs,omitempty"`
}

// LeiosNodeReport is one node's Leios state at the end of the run.
type LeiosNodeReport struct {
	Name string `json:"name"`
	// Status is the Leios part of the last status the node answered; absent
	// when it never answered.
	Status *api.LeiosStatus `json:"status,omitempty"`
	// EBsListed and ClosuresListed count its GET /api/ebs entries, and
	// those with a complete closure.
	EBsListed      int `json:"ebsListed"`
	ClosuresListed int `json:"closuresListed"`
	// Problem says why its EB list could not be read.
	Problem string `json:"problem,omitempty"`
}

// EBDiffusion is one EB's way to the nodes.
type EBDiffusion struct {
	Slot   uint64    `json:"slot"`
	EbHash string    `json:"ebHash"`
	Forged time.Time `json:"forged"` // the start of its slot
	// ClosureMs is, per node name, the milliseconds from Forged until the
	// node held the whole closure; a node without it is absent.
	ClosureMs map[string]int64 `json:"closureMs"`
	// CompleteOnAll: every node whose list was read holds the closure.
	CompleteOnAll bool `json:"completeOnAll"`
	// LastNodeMs is the largest ClosureMs, when CompleteOnAll.
	LastNodeMs *int64 `json:"lastNodeMs,omitempty"`
}

// leiosReport builds the report's Leios section from the nodes' last
// statuses (in w) and their EB lists, in node order; clock dates forging.
func (w *chainWatch) leiosReport(clock consensus.Clock, lists []ebListPoll) *LeiosReport {
	r := &LeiosReport{EBs: []EBDiffusion{}}
	type ebKey struct {
		slot   uint64
		ebHash string
	}
	byKey := map[ebKey]*EBDiffusion{}
	for i, n := range w.nodes {
		nr := LeiosNodeReport{Name: n.name}
		if n.last != nil {
			leios := n.last.Leios
			nr.Status = &leios
		}
		if err := lists[i].Err; err != nil {
			nr.Problem = fmt.Sprintf("EB list not read: %v", err)
			r.Nodes = append(r.Nodes, nr)
			continue
		}
		r.Summary.NodesRead++
		for _, e := range lists[i].EBs {
			nr.EBsListed++
			key := ebKey{e.Slot, e.EbHash}
			eb, ok := byKey[key]
			if !ok {
				eb = &EBDiffusion{Slot: e.Slot, EbHash: e.EbHash, Forged: clock.SlotStart(e.Slot), ClosureMs: map[string]int64{}}
				byKey[key] = eb
			}
			if e.Closure != nil {
				nr.ClosuresListed++
				eb.ClosureMs[n.name] = e.Closure.Sub(eb.Forged).Milliseconds()
			}
		}
		r.Nodes = append(r.Nodes, nr)
	}

	var toLastNode []int64
	for _, key := range slices.SortedFunc(maps.Keys(byKey), func(a, b ebKey) int {
		return cmp.Or(cmp.Compare(a.slot, b.slot), cmp.Compare(a.ebHash, b.ebHash))
	}) {
		eb := byKey[key]
		if r.Summary.NodesRead > 0 && len(eb.ClosureMs) == r.Summary.NodesRead {
			last := slices.Max(slices.Collect(maps.Values(eb.ClosureMs)))
			eb.CompleteOnAll, eb.LastNodeMs = true, &last
			toLastNode = append(toLastNode, last)
		}
		r.EBs = append(r.EBs, *eb)
	}
	r.Summary.EBsSeen = len(r.EBs)
	r.Summary.CompleteOnAll = len(toLastNode)
	if len(toLastNode) > 0 {
		slices.Sort(toLastNode)
		median, most := medianOfSorted(toLastNode), toLastNode[len(toLastNode)-1]
		r.Summary.MedianToLastNodeMs, r.Summary.MaxToLastNodeMs = &median, &most
	}
	return r
}

// medianOfSorted is the middle value of a sorted, non-empty list, or the
// mean of its two middle values.
func medianOfSorted(xs []int64) int64 {
	mid := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[mid]
	}
	return (xs[mid-1] + xs[mid]) / 2
}
