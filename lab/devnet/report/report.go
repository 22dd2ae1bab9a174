package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/load"
)

// maxTipSpread is how many blocks apart the nodes' tips may be, at the end
// of a run, for the nodes to count as agreeing: the last couple of blocks
// may still be diffusing or on short forks.
const maxTipSpread = 2

// Report is the JSON summary devnet --report writes at the end of a run.
type Report struct {
	Dir       string       `json:"dir"`
	Started   time.Time    `json:"started"`
	Stopped   time.Time    `json:"stopped"`
	Slot      uint64       `json:"slot"` // the slot in progress when the run ended
	Nodes     []NodeReport `json:"nodes"`
	Agreement Agreement    `json:"agreement"`
	// Txs is what became of the firehose's txs; absent when it was off.
	Txs *load.Report `json:"txs,omitempty"`
	// Leios is how the endorser blocks diffused.
	Leios *LeiosReport `json:"leios,omitempty"`
	// Chaos is what the chaos mode did and how the nodes recovered; absent
	// without --chaos.
	Chaos *ChaosReport `json:"chaos,omitempty"`
	// Timeline is the run in windows of ten mean RB intervals (10 s on the
	// devnet template, at least 10 s): the EBs' stages, the missed voting
	// windows, the rates and the nodes' CPU by work.
	Timeline *Timeline `json:"timeline,omitempty"`
	// Targets are the figures over the measured span (after the warm-up);
	// absent without a firehose, or when the run did not outlast its
	// warm-up.
	Targets *Targets `json:"targets,omitempty"`
	// Capacity is the run beside its network's structural capacity at the
	// mean size of the firehose's admitted txs; absent without a firehose
	// or an admitted tx.
	Capacity *CapacityReport `json:"capacity,omitempty"`
	// CPU is the nodes' CPU per 1,000 txs on chain over the measured span,
	// beside the floor measured in the same run; absent without a
	// firehose.
	CPU *CPUReport `json:"cpu,omitempty"`
	// Links is the account of the emulated links; absent when the nodes
	// dialed one another directly.
	Links *LinksReport `json:"links,omitempty"`
}

// NodeReport is one node's part of the report, from its last status poll.
type NodeReport struct {
	Name   string `json:"name"`
	PeerID string `json:"peerId"`
	// Up says the node answered the last status poll; the fields below come
	// from the last poll it answered.
	Up            bool               `json:"up"`
	Tip           apitypes.TipStatus `json:"tip"`
	ImmutableTip  apitypes.TipStatus `json:"immutableTip"`
	BlocksForged  uint64             `json:"blocksForged"`
	BlocksAdopted uint64             `json:"blocksAdopted"`
	Peers         int                `json:"peers"`
	// Leios are, per peer of the devnet (by name), the Leios
	// mini-protocols both serve: what the pair speaks.
	Leios  map[string][]string `json:"leios,omitempty"`
	Errors uint64              `json:"errors"`
	// Mempool and TxsOnChain are as the node's last status gave them.
	Mempool    apitypes.MempoolStatus `json:"mempool"`
	TxsOnChain uint64                 `json:"txsOnChain"`
	// FailedPolls counts the status polls it did not answer.
	FailedPolls int `json:"failedPolls"`
	// Exited says how its process ended, when it ended before the devnet
	// stopped it.
	Exited string `json:"exited,omitempty"`
}

// Agreement says whether the nodes hold the same chain up to its last
// couple of blocks.
//
// The verdict rests on what the nodes report in GET /status: every block a
// node ever reported as its immutable tip is final, so two nodes that
// reported different hashes at one block number disagree for good (and a
// node that changed its own immutable block rolled back past k). Younger
// blocks are compared through the recent blocks of each node's last status,
// up to the lowest tip less maxTipSpread.
type Agreement struct {
	// Agree: every node is up, no two immutable blocks conflict, some
	// immutable block was seen on every node, the tips are at most
	// maxTipSpread blocks apart, and the recent blocks agree up to AgreedUpTo.
	Agree bool `json:"agree"`
	// AgreedUpTo is the block number up to which the last statuses were
	// compared block by block.
	AgreedUpTo uint64 `json:"agreedUpTo"`
	// TipSpread is the highest tip block number minus the lowest.
	TipSpread uint64 `json:"tipSpread"`
	// CommonImmutable is the highest block that every node reported as its
	// immutable tip at some poll, with one hash; absent when there is none.
	CommonImmutable *apitypes.TipStatus `json:"commonImmutable,omitempty"`
	// Problems lists why Agree is false.
	Problems []string `json:"problems,omitempty"`
}

// ChainWatch accumulates what the status polls of a run show, for the
// report. It is used by the supervisor's loop alone.
type ChainWatch struct {
	nodes []nodeWatch
}

// nodeWatch is what the polls showed of one node.
type nodeWatch struct {
	name        string
	peerID      string
	last        *apitypes.Status // the last status it answered with
	up          bool             // it answered the last poll
	failedPolls int
	// immutable holds every block the node reported as its immutable tip,
	// by block number.
	immutable map[uint64]apitypes.TipStatus
	// conflicts are its immutable blocks that changed between polls.
	conflicts []string
}

func NewChainWatch(nodes []layout.Node) *ChainWatch {
	w := &ChainWatch{nodes: make([]nodeWatch, len(nodes))}
	for i, n := range nodes {
		w.nodes[i] = nodeWatch{name: n.Name, peerID: n.PeerID.String(), immutable: map[uint64]apitypes.TipStatus{}}
	}
	return w
}

// observe records one round of polls, in node order.
func (w *ChainWatch) Observe(polls []apiclient.StatusPoll) {
	for i, p := range polls {
		n := &w.nodes[i]
		n.up = p.Status != nil
		if !n.up {
			n.failedPolls++
			continue
		}
		n.last = p.Status
		imm := p.Status.ImmutableTip
		if imm.Hash == "" {
			continue // no immutable block yet
		}
		if seen, ok := n.immutable[imm.BlockNumber]; ok && seen.Hash != imm.Hash {
			n.conflicts = append(n.conflicts, fmt.Sprintf("%s changed its immutable block #%d from %s to %s",
				n.name, imm.BlockNumber, apiclient.ShortHash(seen.Hash), apiclient.ShortHash(imm.Hash)))
		}
		n.immutable[imm.BlockNumber] = imm
	}
}

// report summarizes the run. exited[i] is how node i's process ended, when
// it ended before the devnet stopped it, else "".
func (w *ChainWatch) report(dir string, started, stopped time.Time, slot uint64, exited []string) Report {
	r := Report{Dir: dir, Started: started, Stopped: stopped, Slot: slot}
	names := map[string]string{} // peer ID → name
	for _, n := range w.nodes {
		names[n.peerID] = n.name
	}
	for i, n := range w.nodes {
		nr := NodeReport{Name: n.name, PeerID: n.peerID, Up: n.up, FailedPolls: n.failedPolls, Exited: exited[i]}
		if st := n.last; st != nil {
			nr.Tip, nr.ImmutableTip = st.Tip, st.ImmutableTip
			nr.BlocksForged, nr.BlocksAdopted, nr.Errors = st.BlocksForged, st.BlocksAdopted, st.Errors
			nr.Peers = len(st.Peers)
			for _, p := range st.Peers {
				if name, ok := names[p.ID]; ok && len(p.Leios) > 0 {
					if nr.Leios == nil {
						nr.Leios = map[string][]string{}
					}
					nr.Leios[name] = p.Leios
				}
			}
			nr.Mempool, nr.TxsOnChain = st.Mempool, st.TxsOnChain
		}
		r.Nodes = append(r.Nodes, nr)
	}
	r.Agreement = w.agreement()
	return r
}

// recentConflicts compares the nodes' recent blocks numbered up to upTo.
func (w *ChainWatch) recentConflicts(upTo uint64) []string {
	var problems []string
	first := map[uint64]string{} // number -> hash, from the first node listing it
	firstName := map[uint64]string{}
	for _, n := range w.nodes {
		for _, b := range n.last.RecentBlocks {
			if b.BlockNumber > upTo {
				continue
			}
			if h, ok := first[b.BlockNumber]; !ok {
				first[b.BlockNumber], firstName[b.BlockNumber] = b.Hash, n.name
			} else if h != b.Hash {
				problems = append(problems, fmt.Sprintf("%s and %s hold different blocks #%d: %s and %s",
					firstName[b.BlockNumber], n.name, b.BlockNumber, apiclient.ShortHash(h), apiclient.ShortHash(b.Hash)))
			}
		}
	}
	return problems
}

func (w *ChainWatch) agreement() Agreement {
	var a Agreement
	for _, n := range w.nodes {
		if !n.up {
			a.Problems = append(a.Problems, n.name+" is down")
		}
		a.Problems = append(a.Problems, n.conflicts...)
	}
	if len(w.nodes) == 0 {
		return a
	}

	// Tips.
	var lowest, highest uint64
	for i, n := range w.nodes {
		var tip uint64
		if n.last != nil {
			tip = n.last.Tip.BlockNumber
		}
		if i == 0 || tip < lowest {
			lowest = tip
		}
		highest = max(highest, tip)
	}
	a.TipSpread = highest - lowest
	if a.TipSpread > maxTipSpread {
		a.Problems = append(a.Problems, fmt.Sprintf("tips are %d blocks apart (at most %d allowed)", a.TipSpread, maxTipSpread))
	}

	// Immutable blocks, by number: which node reported which hash.
	type reportedBlock struct {
		name  string
		block apitypes.TipStatus
	}
	reported := map[uint64][]reportedBlock{}
	for _, n := range w.nodes {
		for number, b := range n.immutable {
			reported[number] = append(reported[number], reportedBlock{n.name, b})
		}
	}
	for _, number := range slices.Sorted(maps.Keys(reported)) {
		blocks := reported[number]
		same := true
		for _, b := range blocks[1:] {
			if b.block.Hash != blocks[0].block.Hash {
				a.Problems = append(a.Problems, fmt.Sprintf("%s and %s hold different immutable blocks #%d: %s and %s",
					blocks[0].name, b.name, number, apiclient.ShortHash(blocks[0].block.Hash), apiclient.ShortHash(b.block.Hash)))
				same = false
				break
			}
		}
		if same && len(blocks) == len(w.nodes) {
			common := blocks[0].block
			a.CommonImmutable = &common
		}
	}
	if a.CommonImmutable == nil {
		a.Problems = append(a.Problems, "no immutable block was seen on every node")
	}

	// Recent blocks: below the lowest tip less the allowed spread, every
	// node's last status must name the same block at each number.
	if len(a.Problems) == 0 && lowest > maxTipSpread {
		a.Problems = append(a.Problems, w.recentConflicts(lowest-maxTipSpread)...)
		a.AgreedUpTo = lowest - maxTipSpread
	}
	a.Agree = len(a.Problems) == 0
	return a
}

// printProtocols prints which Leios mini-protocols each pair of nodes
// speaks, when they do not all speak the same: a devnet of mixed sets.
func printProtocols(out io.Writer, nodes []NodeReport) {
	pairs := map[string][]string{} // the protocols → the pairs speaking them
	for i, n := range nodes {
		for _, m := range nodes[i+1:] {
			if shared, ok := n.Leios[m.Name]; ok {
				set := strings.Join(shared, " ")
				pairs[set] = append(pairs[set], n.Name+"–"+m.Name)
			}
		}
	}
	if len(pairs) < 2 {
		return
	}
	fmt.Fprintln(out, "Leios protocols each pair speaks:")
	for _, set := range slices.Sorted(maps.Keys(pairs)) {
		fmt.Fprintf(out, "  %s: %s\n", strings.Join(pairs[set], ", "), set)
	}
}

// printAwaited prints, per node that had any, the relayed txs its mempool
// admitted once their missing inputs came: a rollback or gossip's order
// had sent the child before its parent.
func printAwaited(out io.Writer, nodes []NodeReport) {
	var counts []string
	for _, n := range nodes {
		if n.Mempool.Awaited > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", n.Name, n.Mempool.Awaited))
		}
	}
	if len(counts) > 0 {
		fmt.Fprintf(out, "relayed txs admitted once their inputs came (whole run): %s\n", strings.Join(counts, ", "))
	}
}

// printAgreement prints the report's verdict on the nodes' chains.
func printAgreement(out io.Writer, a Agreement) {
	if a.Agree {
		fmt.Fprintf(out, "the nodes agree: common immutable block #%d %s, tips %d blocks apart\n",
			a.CommonImmutable.BlockNumber, apiclient.ShortHash(a.CommonImmutable.Hash), a.TipSpread)
		return
	}
	fmt.Fprintln(out, "chain agreement not confirmed:")
	for _, p := range a.Problems {
		fmt.Fprintln(out, "  "+p)
	}
}
