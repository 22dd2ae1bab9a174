package ui

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
)

// Observation is one round of the devnet's polls, as Run hands it over.
type Observation struct {
	At    time.Time         // when the round started
	Nodes []NodeObservation // in the order of the View's names
	Txs   Txs
}

// NodeObservation is what one node answered in a round.
type NodeObservation struct {
	// Status is its GET /status; nil when it did not answer, and Down
	// then says why ("down", or how its process exited).
	Status *apitypes.Status
	Down   string
	// EBs is its GET /api/ebs; nil when it was not read.
	EBs []apitypes.EBTimes
}

// Txs are the devnet's tx figures of a round, as its status line prints
// them.
type Txs struct {
	Submitted uint64  `json:"submitted"` // by the firehose
	OnChain   uint64  `json:"onChain"`   // the most any node reports
	PerSecond float64 `json:"perSecond"` // reaching the chain, lately
}

// maxEBs is how many EBs a frame shows, the latest by slot.
const maxEBs = 16

// maxRates is how many rounds of the on-chain rate a frame carries.
const maxRates = 120

// stages are an EB's stages in the order the page draws them, the node's
// (apitypes.Stages) and then its certification; a frame's stages follow
// it.
var stages = [...]string{
	string(apitypes.StageAnnounced), string(apitypes.StageBody), string(apitypes.StageClosure),
	string(apitypes.StageValidated), string(apitypes.StageVoted), apitypes.FateCertified,
}

// frame is what the page draws of one observation.
type frame struct {
	Seq     uint64    `json:"seq"` // 1 for the first observation, then one more each
	At      time.Time `json:"at"`
	Slot    uint64    `json:"slot"`
	Started bool      `json:"started"` // the system start has passed
	// Dropped counts the frames dropped so far because a page was slow.
	Dropped uint64 `json:"dropped"`
	// Seats is the committee's size and QuorumVotes the fewest of its
	// votes that reach the quorum (the largest seats first).
	Seats       int                 `json:"seats"`
	QuorumVotes int                 `json:"quorumVotes"`
	Stages      [len(stages)]string `json:"stages"`
	Nodes       []nodeFrame         `json:"nodes"`
	Txs         Txs                 `json:"txs"`
	// Rates are the on-chain rates of the latest rounds, oldest first.
	Rates []float64 `json:"rates"`
	// EBs are the latest EBs any node listed, newest first.
	EBs []ebFrame `json:"ebs"`
}

// nodeFrame is one node in a frame; only Name and Down when it did not
// answer.
type nodeFrame struct {
	Name      string                 `json:"name"`
	Down      string                 `json:"down,omitempty"`
	Tip       *apitypes.TipStatus    `json:"tip,omitempty"`
	Immutable *apitypes.TipStatus    `json:"immutable,omitempty"`
	Peers     int                    `json:"peers"`
	Mempool   apitypes.MempoolStatus `json:"mempool"`
	Leios     *apitypes.LeiosStatus  `json:"leios,omitempty"`
}

// ebFrame is one EB's way through the nodes.
type ebFrame struct {
	Slot  uint64 `json:"slot"`
	Hash  string `json:"hash"` // its first 8 hex digits
	Txs   int    `json:"txs"`
	Bytes int    `json:"bytes"` // of its closure
	// Nodes counts the nodes that listed it.
	Nodes int `json:"nodes"`
	// DeadlineMs is the end of its voting window, after its slot start.
	DeadlineMs int64 `json:"deadlineMs"`
	// Stages follow frame.Stages.
	Stages [len(stages)]stageFrame `json:"stages"`
	// Votes is the most votes any node had relayed for its RB.
	Votes int `json:"votes"`
	// Outcome is what the leaders saw when they forged on its RB: the
	// certifying one's, else the latest one's ("" before any).
	Outcome string `json:"outcome,omitempty"`
}

// stageFrame is when an EB reached a stage: at how many nodes, and the
// first and the last of them in ms after its slot start (absent when
// none).
type stageFrame struct {
	Nodes   int    `json:"nodes"`
	FirstMs *int64 `json:"firstMs,omitempty"`
	LastMs  *int64 `json:"lastMs,omitempty"`
}

// reach notes a node reaching the stage ms after the slot start.
func (s *stageFrame) reach(ms *int64) {
	if ms == nil {
		return
	}
	s.Nodes++
	if s.FirstMs == nil || *ms < *s.FirstMs {
		s.FirstMs = ms
	}
	if s.LastMs == nil || *ms > *s.LastMs {
		s.LastMs = ms
	}
}

// nodeFrames are the nodes of an observation, named.
func nodeFrames(names []string, o Observation) []nodeFrame {
	nodes := make([]nodeFrame, len(names))
	for i, name := range names {
		nodes[i] = nodeFrame{Name: name, Down: "down"}
		if i >= len(o.Nodes) {
			continue
		}
		n := o.Nodes[i]
		st := n.Status
		if st == nil {
			nodes[i].Down = cmp.Or(n.Down, "down")
			continue
		}
		nodes[i] = nodeFrame{
			Name: name, Tip: &st.Tip, Immutable: &st.ImmutableTip, Peers: len(st.Peers),
			Mempool: st.Mempool, Leios: &st.Leios,
		}
	}
	return nodes
}

// ebPoint names an EB.
type ebPoint struct {
	slot uint64
	hash string
}

// ebFrames merges the nodes' EB lists into the latest maxEBs EBs, newest
// first.
func ebFrames(nodes []NodeObservation) []ebFrame {
	ebs := map[ebPoint]*ebFrame{}
	certified := map[ebPoint]bool{}
	latestAttempt := map[ebPoint]time.Time{}
	for _, n := range nodes {
		for _, e := range n.EBs {
			if strings.Trim(e.EbHash, "0") == "" {
				continue // the zero hash names no EB (an outcome noted at the origin)
			}
			p := ebPoint{e.Slot, e.EbHash}
			eb := ebs[p]
			if eb == nil {
				eb = &ebFrame{Slot: e.Slot, Hash: e.EbHash[:min(8, len(e.EbHash))], DeadlineMs: e.StageMs.Deadline}
				ebs[p] = eb
			}
			eb.Nodes++
			eb.Txs, eb.Bytes = max(eb.Txs, e.Txs), max(eb.Bytes, e.ClosureBytes)
			eb.Votes = max(eb.Votes, e.Votes)
			for i, stage := range apitypes.Stages() {
				eb.Stages[i].reach(*e.StageMs.At(stage))
			}
			if a := e.Certify; a != nil {
				switch {
				case a.Outcome == apitypes.CertifyCertified:
					eb.Stages[len(stages)-1].reach(&a.AtMs)
					eb.Outcome, certified[p] = a.Outcome, true
				case !certified[p] && !a.At.Before(latestAttempt[p]):
					eb.Outcome, latestAttempt[p] = a.Outcome, a.At
				}
			}
		}
	}
	latest := slices.SortedFunc(maps.Values(ebs), func(a, b *ebFrame) int {
		return cmp.Or(cmp.Compare(b.Slot, a.Slot), cmp.Compare(a.Hash, b.Hash))
	})
	out := make([]ebFrame, 0, min(len(latest), maxEBs))
	for _, eb := range latest[:min(len(latest), maxEBs)] {
		out = append(out, *eb)
	}
	return out
}
