package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/node"
)

// up is a poll answered with this tip and immutable tip; hashes are the
// block numbers spelt out after a fork letter, and no fork is no block.
func up(tip uint64, tipFork string, imm uint64, immFork string) nodePoll {
	return nodePoll{Status: &node.Status{
		Tip:           node.TipStatus{BlockNumber: tip, Hash: blockHash(tip, tipFork)},
		ImmutableTip:  node.TipStatus{BlockNumber: imm, Hash: blockHash(imm, immFork)},
		Peers:         []string{"a", "b"},
		BlocksForged:  tip / 3,
		BlocksAdopted: tip,
	}}
}

var down = nodePoll{Err: fmt.Errorf("connection refused")}

func blockHash(number uint64, fork string) string {
	if fork == "" {
		return "" // no block: the tip of an empty chain
	}
	return fmt.Sprintf("%s%015x", fork, number) + strings.Repeat("0", 48)
}

func watchOf(n int) *chainWatch {
	nodes := make([]devnetNode, n)
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("node-%d", i)
	}
	return newChainWatch(nodes)
}

func TestAgreement(t *testing.T) {
	tests := []struct {
		name         string
		rounds       [][]nodePoll
		agree        bool
		common       uint64 // CommonImmutable's block number when agree
		wantProblems []string
	}{
		{
			name: "one chain",
			rounds: [][]nodePoll{
				{up(12, "a", 2, "a"), up(12, "a", 2, "a"), up(12, "a", 2, "a")},
				{up(13, "a", 3, "a"), up(14, "b", 4, "a"), up(13, "a", 3, "a")},
			},
			agree: true, common: 2,
		},
		{
			name: "forked tips of equal length",
			rounds: [][]nodePoll{
				{up(13, "a", 3, "a"), up(13, "b", 3, "a"), up(13, "c", 3, "a")},
			},
			agree: true, common: 3,
		},
		{
			name: "a node down at the end",
			rounds: [][]nodePoll{
				{up(12, "a", 2, "a"), up(12, "a", 2, "a"), up(12, "a", 2, "a")},
				{up(13, "a", 3, "a"), up(13, "a", 3, "a"), down},
			},
			wantProblems: []string{"node-2 is down"},
		},
		{
			name: "nodes disagree on an immutable block",
			rounds: [][]nodePoll{
				{up(12, "a", 2, "a"), up(12, "b", 2, "b"), up(12, "a", 2, "a")},
			},
			wantProblems: []string{"node-0 and node-1 hold different immutable blocks #2", "no immutable block was seen on every node"},
		},
		{
			name: "two nodes disagree on a block the first never saw",
			rounds: [][]nodePoll{
				{up(12, "a", 2, "a"), up(13, "a", 3, "a"), up(13, "b", 3, "b")},
				{up(12, "a", 2, "a"), up(13, "a", 3, "a"), up(13, "b", 3, "b")},
			},
			wantProblems: []string{"node-1 and node-2 hold different immutable blocks #3", "no immutable block was seen on every node"},
		},
		{
			name: "a node rolled back an immutable block",
			rounds: [][]nodePoll{
				{up(12, "a", 2, "a"), up(12, "a", 2, "a")},
				{up(12, "a", 2, "a"), up(12, "b", 2, "b")},
			},
			wantProblems: []string{
				"node-1 changed its immutable block #2",
				"node-0 and node-1 hold different immutable blocks #2",
				"no immutable block was seen on every node",
			},
		},
		{
			name: "tips too far apart",
			rounds: [][]nodePoll{
				{up(20, "a", 10, "a"), up(17, "a", 10, "a")},
			},
			wantProblems: []string{"tips are 3 blocks apart"},
		},
		{
			name: "no immutable block yet",
			rounds: [][]nodePoll{
				{up(3, "a", 0, ""), up(3, "a", 0, "")},
			},
			wantProblems: []string{"no immutable block was seen on every node"},
		},
		{
			name: "immutable blocks never overlap",
			rounds: [][]nodePoll{
				{up(12, "a", 2, "a"), up(13, "a", 3, "a")},
			},
			wantProblems: []string{"no immutable block was seen on every node"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := watchOf(len(tt.rounds[0]))
			for _, r := range tt.rounds {
				w.observe(r)
			}
			a := w.agreement()
			if a.Agree != tt.agree {
				t.Fatalf("agree %v, want %v; problems %q", a.Agree, tt.agree, a.Problems)
			}
			if tt.agree && (a.CommonImmutable == nil || a.CommonImmutable.BlockNumber != tt.common) {
				t.Errorf("common immutable %+v, want #%d", a.CommonImmutable, tt.common)
			}
			if len(a.Problems) != len(tt.wantProblems) {
				t.Fatalf("problems %q, want %q", a.Problems, tt.wantProblems)
			}
			for i, want := range tt.wantProblems {
				if !strings.Contains(a.Problems[i], want) {
					t.Errorf("problem %q, want one containing %q", a.Problems[i], want)
				}
			}
		})
	}
}

// TestAgreementProperty: nodes that only ever report blocks of one chain
// (tips within two blocks) always agree once an immutable block is common;
// giving one node a different hash at a block number another node reported
// is always caught.
func TestAgreementProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := rapid.IntRange(1, 5).Draw(t, "nodes")
		rounds := rapid.IntRange(1, 8).Draw(t, "rounds")
		w := watchOf(nodes)
		base := uint64(20)
		var reported []map[uint64]bool // per node, immutable numbers it reported
		for range nodes {
			reported = append(reported, map[uint64]bool{})
		}
		for r := range rounds {
			polls := make([]nodePoll, nodes)
			for i := range polls {
				tip := base + uint64(r) + rapid.Uint64Range(0, 2).Draw(t, "lead")
				imm := tip - 10
				polls[i] = up(tip, "a", imm, "a")
				reported[i][imm] = true
			}
			if r == rounds-1 { // the final poll: tips within two blocks
				tip := base + uint64(r) + 2
				for i := range polls {
					polls[i] = up(tip, "a", tip-10, "a")
					reported[i][tip-10] = true
				}
			}
			w.observe(polls)
		}
		a := w.agreement()
		if !a.Agree {
			t.Fatalf("one chain, yet problems %q", a.Problems)
		}

		// A forked immutable block on one node, at a number another node saw.
		if nodes < 2 {
			return
		}
		liar := rapid.IntRange(0, nodes-1).Draw(t, "liar")
		witness := (liar + 1) % nodes
		var seen []uint64
		for number := range reported[witness] {
			seen = append(seen, number)
		}
		number := rapid.SampledFrom(seen).Draw(t, "number")
		polls := make([]nodePoll, nodes)
		for i := range polls {
			polls[i] = up(number+10, "a", number, "a")
		}
		polls[liar] = up(number+10, "x", number, "x")
		w.observe(polls)
		if a := w.agreement(); a.Agree {
			t.Fatalf("node-%d reported a forked immutable block #%d, yet the nodes agree", liar, number)
		}
	})
}

// TestReportJSON pins the report's JSON shape, which scripts read.
func TestReportJSON(t *testing.T) {
	w := watchOf(2)
	w.nodes[0].peerID, w.nodes[1].peerID = "12D3KooA", "12D3KooB"
	w.observe([]nodePoll{up(13, "a", 3, "a"), up(12, "a", 2, "a")})
	last := up(13, "a", 3, "a")
	last.Status.Mempool, last.Status.TxsOnChain = node.MempoolStatus{Txs: 3, Bytes: 690}, 250
	w.observe([]nodePoll{last, down})
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	r := w.report("/tmp/devnet", start, start.Add(time.Minute), 600, []string{"", "exited: signal: killed"})

	// Without a firehose there is no "txs".
	var fields map[string]json.RawMessage
	if b, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	if txs, ok := fields["txs"]; ok {
		t.Errorf("report without a firehose has txs: %s", txs)
	}
	r.Txs = &TxReport{
		Rate: 20, Chains: 10, Submitted: 1200, Admitted: 1195,
		Rejected:    map[string]uint64{"ledger: input not in UTxO": 2},
		MempoolFull: 3, OnChain: 1180, InMempoolAtEnd: 14, OnSomeChains: 0, Lost: 1, Settled: true,
		StoppedChains: []string{"payment-3 (to node-0) stopped: its output … is neither in the mempool nor unspent at node-0"},
	}
	got, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "dir": "/tmp/devnet",
  "started": "2025-01-02T03:04:05Z",
  "stopped": "2025-01-02T03:05:05Z",
  "slot": 600,
  "nodes": [
    {
      "name": "node-0",
      "peerId": "12D3KooA",
      "up": true,
      "tip": {
        "blockNumber": 13,
        "slot": 0,
        "hash": "a00000000000000d000000000000000000000000000000000000000000000000"
      },
      "immutableTip": {
        "blockNumber": 3,
        "slot": 0,
        "hash": "a000000000000003000000000000000000000000000000000000000000000000"
      },
      "blocksForged": 4,
      "blocksAdopted": 13,
      "peers": 2,
      "errors": 0,
      "mempool": {
        "txs": 3,
        "bytes": 690
      },
      "txsOnChain": 250,
      "failedPolls": 0
    },
    {
      "name": "node-1",
      "peerId": "12D3KooB",
      "up": false,
      "tip": {
        "blockNumber": 12,
        "slot": 0,
        "hash": "a00000000000000c000000000000000000000000000000000000000000000000"
      },
      "immutableTip": {
        "blockNumber": 2,
        "slot": 0,
        "hash": "a000000000000002000000000000000000000000000000000000000000000000"
      },
      "blocksForged": 4,
      "blocksAdopted": 12,
      "peers": 2,
      "errors": 0,
      "mempool": {
        "txs": 0,
        "bytes": 0
      },
      "txsOnChain": 0,
      "failedPolls": 1,
      "exited": "exited: signal: killed"
    }
  ],
  "agreement": {
    "agree": false,
    "agreedUpTo": 0,
    "tipSpread": 1,
    "problems": [
      "node-1 is down",
      "no immutable block was seen on every node"
    ]
  },
  "txs": {
    "rate": 20,
    "chains": 10,
    "submitted": 1200,
    "admitted": 1195,
    "rejected": {
      "ledger: input not in UTxO": 2
    },
    "mempoolFull": 3,
    "submitErrors": 0,
    "onChain": 1180,
    "inMempoolAtEnd": 14,
    "onSomeChains": 0,
    "lost": 1,
    "settled": true,
    "stoppedChains": [
      "payment-3 (to node-0) stopped: its output … is neither in the mempool nor unspent at node-0"
    ]
  }
}`
	if string(got) != want {
		t.Errorf("report JSON:\n%s\nwant:\n%s", got, want)
	}
}
