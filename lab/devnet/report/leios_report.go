package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/load"
)

// EBList is one node's answer to GET /api/ebs; Err is non-nil when it
// did not answer.
type EBList struct {
	EBs []apitypes.EBTimes
	Err error
}

// LeiosReport is the report's account of EB diffusion, from each node's
// last status and its GET /api/ebs, read just before the nodes stopped.
// An EB counts as forged at the start of its slot (the slot of the RB that
// announced it), so each time includes the forging itself.
type LeiosReport struct {
	Summary LeiosSummary `json:"summary"`
	// Chain is what the nodes' chains show of Leios: the EBs certified, why
	// the others were not, and the txs through RBs and EBs; absent when no
	// node's chain was read.
	Chain *LeiosChain       `json:"chain,omitempty"`
	Nodes []LeiosNodeReport `json:"nodes"`
	// EBs are the EBs some node listed or some chain announced, by slot,
	// then hash.
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
	Status *apitypes.LeiosStatus `json:"status,omitempty"`
	// EBsListed and ClosuresListed count its GET /api/ebs entries, and
	// those with a complete closure.
	EBsListed      int `json:"ebsListed"`
	ClosuresListed int `json:"closuresListed"`
	// Problem says why its EB list could not be read.
	Problem string `json:"problem,omitempty"`
}

// EBDiffusion is one EB's way to the nodes, and to the chain.
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

	// Votes are the nodes' vote outcomes on it (apitypes.Vote*), by node name;
	// a node without one (a relay, or none yet) is absent. VotesSeen are
	// the votes relayed to each node that listed it, for its RB.
	Votes     map[string]string `json:"votes,omitempty"`
	VotesSeen map[string]int    `json:"votesSeen,omitempty"`
	// Txs is the EB's size in txs, from its body at any node that held
	// it; 0 when none did.
	Txs int `json:"txs,omitempty"`
	// StageMs are, per node name, the EB's stages at the node in ms after
	// its slot start; a node that did not list them is absent.
	StageMs map[string]apitypes.StageMs `json:"stageMs,omitempty"`
	// Certify is, per node name, what the node saw when it led a slot on
	// the announcing RB (more than one when forks had several leaders).
	Certify map[string]apitypes.CertifyAttempt `json:"certify,omitempty"`
	// When some node's chain was read (LeiosReport.Chain): RB is the block
	// of the common chain that announced it; CertifiedBy the CertRB that
	// certified it, or NotCertified why none did: one of the API's reasons
	// (apitypes.Reason*), or "pending" (apitypes.FatePending) while no
	// block follows its RB on the common chain.
	RB           *apitypes.TipStatus `json:"rb,omitempty"`
	CertifiedBy  *apitypes.TipStatus `json:"certifiedBy,omitempty"`
	NotCertified string              `json:"notCertified,omitempty"`
}

// leiosReport builds the report's Leios section from the nodes' last
// statuses (in w), their EB lists and, when some node's chain was read,
// their chains (walks), all in node order; clock dates forging, minCertGap
// is the genesis's.
func (w *ChainWatch) leiosReport(clock consensus.Clock, minCertGap int, lists []EBList, walks []load.ChainWalk) *LeiosReport {
	r := &LeiosReport{EBs: []EBDiffusion{}}
	ebs := ebsByPoint{}
	names := make([]string, len(w.nodes))
	for i, n := range w.nodes {
		names[i] = n.name
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
			if strings.Trim(e.EbHash, "0") == "" {
				continue // the zero hash names no EB (an outcome noted at the origin)
			}
			nr.EBsListed++
			eb := ebs.at(ebPoint{e.Slot, e.EbHash}, clock)
			if e.Closure != nil {
				nr.ClosuresListed++
				eb.ClosureMs[n.name] = e.Closure.Sub(eb.Forged).Milliseconds()
			}
			eb.noteVotes(n.name, e)
			eb.noteStages(n.name, e)
		}
		r.Nodes = append(r.Nodes, nr)
	}
	r.Summary.EBsSeen = len(ebs)
	if len(load.Answered(walks)) > 0 {
		r.Chain = certifyEBs(walks, names, clock, minCertGap, ebs)
	}

	var toLastNode []int64
	for _, p := range slices.SortedFunc(maps.Keys(ebs), func(a, b ebPoint) int {
		return cmp.Or(cmp.Compare(a.slot, b.slot), cmp.Compare(a.ebHash, b.ebHash))
	}) {
		eb := ebs[p]
		if r.Summary.NodesRead > 0 && len(eb.ClosureMs) == r.Summary.NodesRead {
			last := slices.Max(slices.Collect(maps.Values(eb.ClosureMs)))
			eb.CompleteOnAll, eb.LastNodeMs = true, &last
			toLastNode = append(toLastNode, last)
		}
		r.EBs = append(r.EBs, *eb)
	}
	r.Summary.CompleteOnAll = len(toLastNode)
	if len(toLastNode) > 0 {
		slices.Sort(toLastNode)
		median, most := medianOfSorted(toLastNode), toLastNode[len(toLastNode)-1]
		r.Summary.MedianToLastNodeMs, r.Summary.MaxToLastNodeMs = &median, &most
	}
	return r
}

// ebsByPoint are the report's EBs, by point.
type ebsByPoint map[ebPoint]*EBDiffusion

// at is the EB at p, added if it is new; clock dates its forging.
func (ebs ebsByPoint) at(p ebPoint, clock consensus.Clock) *EBDiffusion {
	eb, ok := ebs[p]
	if !ok {
		eb = &EBDiffusion{Slot: p.slot, EbHash: p.ebHash, Forged: clock.SlotStart(p.slot), ClosureMs: map[string]int64{}}
		ebs[p] = eb
	}
	return eb
}

// noteVotes records what the node named listed of the votes on eb.
func (eb *EBDiffusion) noteVotes(node string, e apitypes.EBTimes) {
	if eb.VotesSeen == nil {
		eb.VotesSeen = map[string]int{}
	}
	eb.VotesSeen[node] = e.Votes
	if e.Vote != "" {
		if eb.Votes == nil {
			eb.Votes = map[string]string{}
		}
		eb.Votes[node] = e.Vote
	}
}

// noteStages records what the node named listed of eb's stages, size and
// certification.
func (eb *EBDiffusion) noteStages(node string, e apitypes.EBTimes) {
	if e.Txs > 0 {
		eb.Txs = e.Txs
	}
	if e.StageMs != (apitypes.StageMs{}) { // a node too old to give them
		if eb.StageMs == nil {
			eb.StageMs = map[string]apitypes.StageMs{}
		}
		eb.StageMs[node] = e.StageMs
	}
	if e.Certify != nil {
		if eb.Certify == nil {
			eb.Certify = map[string]apitypes.CertifyAttempt{}
		}
		eb.Certify[node] = *e.Certify
	}
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

// printLeiosSummary prints the report's summary of EB diffusion and of
// what the chain shows of Leios.
func printLeiosSummary(out io.Writer, r *LeiosReport) {
	s := r.Summary
	fmt.Fprintf(out, "EBs: %d seen, %d complete on all %d nodes read", s.EBsSeen, s.CompleteOnAll, s.NodesRead)
	if s.MedianToLastNodeMs != nil {
		fmt.Fprintf(out, "; slot start to the last node's closure: median %d ms, max %d ms", *s.MedianToLastNodeMs, *s.MaxToLastNodeMs)
	}
	fmt.Fprintln(out)
	for _, n := range r.Nodes {
		if n.Problem != "" {
			fmt.Fprintf(out, "  %s: %s\n", n.Name, n.Problem)
		}
	}
	c := r.Chain
	if c == nil {
		return
	}
	fmt.Fprintf(out, "the common chain of %d nodes, %d blocks: %d EBs announced, %d certified", c.NodesRead, c.Blocks, c.EBsAnnounced, c.EBsCertified)
	sep := "; not certified: "
	for _, reason := range notCertifiedOutcomes() {
		if n := c.NotCertified[reason]; n > 0 {
			fmt.Fprintf(out, "%s%d %s", sep, n, reason)
			sep = ", "
		}
	}
	if c.EquivocationsCertified > 0 {
		fmt.Fprintf(out, "; CERTIFIED ALTHOUGH EQUIVOCATED: %d", c.EquivocationsCertified)
	}
	fmt.Fprintf(out, "\n  through RBs %.1f tx/s, through EBs %.1f tx/s (%d and %d txs in %.1f s from the system start)\n",
		c.RBTxPerSecond, c.EBTxPerSecond, c.TxsViaRBs, c.TxsViaEBs, c.Seconds)
	for _, p := range c.Problems {
		fmt.Fprintln(out, "  "+p)
	}
}
