package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/load"
)

// up is a poll answered with this tip and immutable tip; hashes are the
// block numbers spelt out after a fork letter, and no fork is no block.
func up(tip uint64, tipFork string, imm uint64, immFork string) apiclient.StatusPoll {
	return apiclient.StatusPoll{Status: &apitypes.Status{
		Tip:           apitypes.TipStatus{BlockNumber: tip, Hash: blockHash(tip, tipFork)},
		ImmutableTip:  apitypes.TipStatus{BlockNumber: imm, Hash: blockHash(imm, immFork)},
		Peers:         []apitypes.Peer{{ID: "a"}, {ID: "b"}},
		BlocksForged:  tip / 3,
		BlocksAdopted: tip,
	}}
}

var down = apiclient.StatusPoll{Err: fmt.Errorf("connection refused")}

func blockHash(number uint64, fork string) string {
	if fork == "" {
		return "" // no block: the tip of an empty chain
	}
	return fmt.Sprintf("%s%015x", fork, number) + strings.Repeat("0", 48)
}

func watchOf(n int) *ChainWatch {
	nodes := make([]layout.Node, n)
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("node-%d", i)
	}
	return NewChainWatch(nodes)
}

func TestAgreement(t *testing.T) {
	tests := []struct {
		name         string
		rounds       [][]apiclient.StatusPoll
		agree        bool
		common       uint64 // CommonImmutable's block number when agree
		wantProblems []string
	}{
		{
			name: "one chain",
			rounds: [][]apiclient.StatusPoll{
				{up(12, "a", 2, "a"), up(12, "a", 2, "a"), up(12, "a", 2, "a")},
				{up(13, "a", 3, "a"), up(14, "b", 4, "a"), up(13, "a", 3, "a")},
			},
			agree: true, common: 2,
		},
		{
			name: "forked tips of equal length",
			rounds: [][]apiclient.StatusPoll{
				{up(13, "a", 3, "a"), up(13, "b", 3, "a"), up(13, "c", 3, "a")},
			},
			agree: true, common: 3,
		},
		{
			name: "a node down at the end",
			rounds: [][]apiclient.StatusPoll{
				{up(12, "a", 2, "a"), up(12, "a", 2, "a"), up(12, "a", 2, "a")},
				{up(13, "a", 3, "a"), up(13, "a", 3, "a"), down},
			},
			wantProblems: []string{"node-2 is down"},
		},
		{
			name: "nodes disagree on an immutable block",
			rounds: [][]apiclient.StatusPoll{
				{up(12, "a", 2, "a"), up(12, "b", 2, "b"), up(12, "a", 2, "a")},
			},
			wantProblems: []string{"node-0 and node-1 hold different immutable blocks #2", "no immutable block was seen on every node"},
		},
		{
			name: "two nodes disagree on a block the first never saw",
			rounds: [][]apiclient.StatusPoll{
				{up(12, "a", 2, "a"), up(13, "a", 3, "a"), up(13, "b", 3, "b")},
				{up(12, "a", 2, "a"), up(13, "a", 3, "a"), up(13, "b", 3, "b")},
			},
			wantProblems: []string{"node-1 and node-2 hold different immutable blocks #3", "no immutable block was seen on every node"},
		},
		{
			name: "a node rolled back an immutable block",
			rounds: [][]apiclient.StatusPoll{
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
			rounds: [][]apiclient.StatusPoll{
				{up(20, "a", 10, "a"), up(17, "a", 10, "a")},
			},
			wantProblems: []string{"tips are 3 blocks apart"},
		},
		{
			name: "no immutable block yet",
			rounds: [][]apiclient.StatusPoll{
				{up(3, "a", 0, ""), up(3, "a", 0, "")},
			},
			wantProblems: []string{"no immutable block was seen on every node"},
		},
		{
			name: "immutable blocks never overlap",
			rounds: [][]apiclient.StatusPoll{
				{up(12, "a", 2, "a"), up(13, "a", 3, "a")},
			},
			wantProblems: []string{"no immutable block was seen on every node"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := watchOf(len(tt.rounds[0]))
			for _, r := range tt.rounds {
				w.Observe(r)
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
			polls := make([]apiclient.StatusPoll, nodes)
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
			w.Observe(polls)
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
		polls := make([]apiclient.StatusPoll, nodes)
		for i := range polls {
			polls[i] = up(number+10, "a", number, "a")
		}
		polls[liar] = up(number+10, "x", number, "x")
		w.Observe(polls)
		if a := w.agreement(); a.Agree {
			t.Fatalf("node-%d reported a forked immutable block #%d, yet the nodes agree", liar, number)
		}
	})
}

// TestReportJSON pins the report's JSON shape, which scripts read.
func TestReportJSON(t *testing.T) {
	w := watchOf(2)
	w.nodes[0].peerID, w.nodes[1].peerID = "12D3KooA", "12D3KooB"
	w.Observe([]apiclient.StatusPoll{up(13, "a", 3, "a"), up(12, "a", 2, "a")})
	last := up(13, "a", 3, "a")
	last.Status.Mempool, last.Status.TxsOnChain = apitypes.MempoolStatus{Txs: 3, Bytes: 690, Awaited: 2}, 250
	w.Observe([]apiclient.StatusPoll{last, down})
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
	r.Txs = &load.Report{
		Rate: 20, Chains: 10, Submitted: 1200, Admitted: 1195, RejectedTxs: 1, RefusedAtStop: 3, UnansweredAtStop: 1,
		Rejected: map[string]uint64{"ledger: input not in UTxO": 2},
		Refused:  map[string]uint64{"queue-delay": 3}, OnChain: 1180, InMempoolAtEnd: 14, OnSomeChains: 0, Lost: 1, Settled: true,
		DroppedByNodes: 4, DroppedBy: map[string]uint64{"node-1": 4}, Resubmitted: 4,
		Latency:          &load.Latency{Measured: "(what)", Txs: 1180, P50Ms: 1900, P95Ms: 4100, MaxMs: 7300},
		OfferedPerSecond: 19.9, BuildMicros: 41.5, SubmitMillis: 1.25, CheckMs: 312,
		StoppedChains: []string{"payment-3 (to node-0) stopped: rejected 5 times in a row: ledger: tx expired (slot ≥ ttl)"},
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
        "bytes": 690,
        "capacityBytes": 0,
        "awaited": 2
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
        "bytes": 0,
        "capacityBytes": 0
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
    "rejectedTxs": 1,
    "refusedAtStop": 3,
    "unansweredAtStop": 1,
    "rejected": {
      "ledger: input not in UTxO": 2
    },
    "refused": {
      "queue-delay": 3
    },
    "submitErrors": 0,
    "droppedByNodes": 4,
    "droppedBy": {
      "node-1": 4
    },
    "resubmitted": 4,
    "onChain": 1180,
    "inMempoolAtEnd": 14,
    "onSomeChains": 0,
    "lost": 1,
    "checkMs": 312,
    "latency": {
      "measured": "(what)",
      "txs": 1180,
      "p50Ms": 1900,
      "p95Ms": 4100,
      "maxMs": 7300
    },
    "offeredPerSecond": 19.9,
    "buildMicros": 41.5,
    "submitMillis": 1.25,
    "txsPerPost": 0,
    "offeredBytes": 0,
    "onChainBytes": 0,
    "offeredTxkBPerSecond": 0,
    "onChainTxkBPerSecond": 0,
    "settled": true,
    "stoppedChains": [
      "payment-3 (to node-0) stopped: rejected 5 times in a row: ledger: tx expired (slot ≥ ttl)"
    ]
  }
}`
	if string(got) != want {
		t.Errorf("report JSON:\n%s\nwant:\n%s", got, want)
	}
	checkFormatted(t, r, "")
}

// checkFormatted: no text of v's JSON, nor printed, holds a fmt error
// ("%!d(string=…)", "%!(EXTRA …)"): a format and its arguments that do not
// match, which go vet misses when the format is a variable.
func checkFormatted(t *testing.T, v any, printed string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"JSON": string(b), "printed text": printed} {
		if i := strings.Index(text, "%!"); i >= 0 {
			t.Errorf("the %s holds a fmt error: …%s…", what, text[max(0, i-80):min(len(text), i+80)])
		}
	}
}

// fakeLeiosNode is a node's answers to GET /status, with these Leios
// counts, and to GET /api/ebs, with this body.
func fakeLeiosNode(leios apitypes.LeiosStatus, ebs string) (apiclient.StatusPoll, EBList) {
	poll := apiclient.StatusPoll{Status: &apitypes.Status{Tip: apitypes.TipStatus{BlockNumber: 9, Hash: blockHash(9, "a")}, Leios: leios}}
	var list EBList
	if err := json.Unmarshal([]byte(ebs), &list.EBs); err != nil {
		list.Err = fmt.Errorf("GET /api/ebs: %w", err)
	}
	return poll, list
}

// TestLeiosReport polls fake nodes — two answering, one down, one whose
// EB list fails — and pins the report's Leios section: per EB the time
// from its slot start to each node's complete closure, its stages at each
// node, its size and the leader's look at its votes, per node its last
// Leios status, and the summary over the EBs complete on every node read.
func TestLeiosReport(t *testing.T) {
	clock := consensus.Clock{Start: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), SlotLength: 100 * time.Millisecond}
	// Times are slot starts (slot 10 = 03:04:06) plus the delay.
	forgerPoll, forger := fakeLeiosNode(apitypes.LeiosStatus{EBsForged: 3, EBsAnnounced: 3, BodiesHeld: 3, ClosuresComplete: 3}, `[
		{"slot": 10, "ebHash": "aa10", "txs": 120, "announced": "2025-01-02T03:04:06.001Z", "body": "2025-01-02T03:04:06.004Z", "closure": "2025-01-02T03:04:06.005Z", "vote": "voted", "votes": 2,
		 "stageMs": {"announced": 1, "body": 4, "closure": 5, "validated": 7, "voted": 8, "deadline": 600}},
		{"slot": 20, "ebHash": "bb20", "announced": "2025-01-02T03:04:07.001Z", "body": "2025-01-02T03:04:07.002Z", "closure": "2025-01-02T03:04:07.003Z", "vote": "closure incomplete in the voting window", "votes": 1},
		{"slot": 30, "ebHash": "dd30", "announced": "2025-01-02T03:04:08.001Z", "body": "2025-01-02T03:04:08.002Z", "closure": "2025-01-02T03:04:08.004Z"}
	]`)
	// The receiver lists its EBs in the order it learned of them, and one
	// more EB (announced at slot 20 too) whose closure it lacks.
	receiverPoll, receiver := fakeLeiosNode(apitypes.LeiosStatus{EBsAnnounced: 4, BodiesHeld: 4, ClosuresComplete: 3, MissingTxs: 12, RequestsInFlight: 1, FetchedBytes: 123456}, `[
		{"slot": 10, "ebHash": "aa10", "txs": 120, "announced": "2025-01-02T03:04:06.050Z", "body": "2025-01-02T03:04:06.120Z", "closure": "2025-01-02T03:04:06.250Z", "votes": 2,
		 "stageMs": {"announced": 50, "body": 120, "closure": 250, "deadline": 600},
		 "certify": {"slot": 22, "at": "2025-01-02T03:04:07.201Z", "atMs": 1201, "votes": 2, "outcome": "certified"}},
		{"slot": 30, "ebHash": "dd30", "announced": "2025-01-02T03:04:08.040Z", "closure": "2025-01-02T03:04:08.130Z"},
		{"slot": 20, "ebHash": "cc20", "announced": "2025-01-02T03:04:07.060Z", "body": "2025-01-02T03:04:07.100Z"},
		{"slot": 20, "ebHash": "bb20", "announced": "2025-01-02T03:04:07.050Z", "closure": "2025-01-02T03:04:07.420Z"}
	]`)
	downNode := EBList{Err: errors.New("connection refused")}
	noListPoll, noList := fakeLeiosNode(apitypes.LeiosStatus{EBsAnnounced: 2}, `{not json`)

	names := make([]layout.Node, 4)
	for i := range names {
		names[i].Name = fmt.Sprintf("node-%d", i)
	}
	w := NewChainWatch(names)
	w.Observe([]apiclient.StatusPoll{forgerPoll, receiverPoll, down, noListPoll})
	r := w.leiosReport(clock, 10, []EBList{forger, receiver, downNode, noList}, nil)

	// node-3's problem names the decoder's error; compare it apart.
	if p := r.Nodes[3].Problem; !strings.HasPrefix(p, "EB list not read: GET /api/ebs: ") {
		t.Errorf("node-3's problem %q", p)
	}
	if p := r.Nodes[2].Problem; !strings.HasPrefix(p, "EB list not read: ") {
		t.Errorf("node-2's problem %q", p)
	}
	r.Nodes[2].Problem, r.Nodes[3].Problem = "(down)", "(garbled)"
	got, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "summary": {
    "ebsSeen": 4,
    "nodesRead": 2,
    "completeOnAll": 3,
    "medianToLastNodeMs": 250,
    "maxToLastNodeMs": 420
  },
  "nodes": [
    {
      "name": "node-0",
      "status": {
        "ebsForged": 3,
        "ebsAnnounced": 3,
        "bodiesHeld": 3,
        "closuresComplete": 3,
        "ebsCertified": 0,
        "missingTxs": 0,
        "requestsInFlight": 0,
        "fetchedBytes": 0,
        "ebsFetchedWhole": 0,
        "bodiesFetchedByPoint": 0,
        "txsFromMempool": 0,
        "votesCast": 0,
        "votesReceived": 0,
        "votesInvalid": 0,
        "votesVerified": 0,
        "verificationsPerVote": 0,
        "votesRepeated": 0,
        "votesShed": 0,
        "equivocations": 0,
        "certificatesBuilt": 0
      },
      "ebsListed": 3,
      "closuresListed": 3
    },
    {
      "name": "node-1",
      "status": {
        "ebsForged": 0,
        "ebsAnnounced": 4,
        "bodiesHeld": 4,
        "closuresComplete": 3,
        "ebsCertified": 0,
        "missingTxs": 12,
        "requestsInFlight": 1,
        "fetchedBytes": 123456,
        "ebsFetchedWhole": 0,
        "bodiesFetchedByPoint": 0,
        "txsFromMempool": 0,
        "votesCast": 0,
        "votesReceived": 0,
        "votesInvalid": 0,
        "votesVerified": 0,
        "verificationsPerVote": 0,
        "votesRepeated": 0,
        "votesShed": 0,
        "equivocations": 0,
        "certificatesBuilt": 0
      },
      "ebsListed": 4,
      "closuresListed": 3
    },
    {
      "name": "node-2",
      "ebsListed": 0,
      "closuresListed": 0,
      "problem": "(down)"
    },
    {
      "name": "node-3",
      "status": {
        "ebsForged": 0,
        "ebsAnnounced": 2,
        "bodiesHeld": 0,
        "closuresComplete": 0,
        "ebsCertified": 0,
        "missingTxs": 0,
        "requestsInFlight": 0,
        "fetchedBytes": 0,
        "ebsFetchedWhole": 0,
        "bodiesFetchedByPoint": 0,
        "txsFromMempool": 0,
        "votesCast": 0,
        "votesReceived": 0,
        "votesInvalid": 0,
        "votesVerified": 0,
        "verificationsPerVote": 0,
        "votesRepeated": 0,
        "votesShed": 0,
        "equivocations": 0,
        "certificatesBuilt": 0
      },
      "ebsListed": 0,
      "closuresListed": 0,
      "problem": "(garbled)"
    }
  ],
  "ebs": [
    {
      "slot": 10,
      "ebHash": "aa10",
      "forged": "2025-01-02T03:04:06Z",
      "closureMs": {
        "node-0": 5,
        "node-1": 250
      },
      "completeOnAll": true,
      "lastNodeMs": 250,
      "votes": {
        "node-0": "voted"
      },
      "votesSeen": {
        "node-0": 2,
        "node-1": 2
      },
      "txs": 120,
      "stageMs": {
        "node-0": {
          "announced": 1,
          "body": 4,
          "closure": 5,
          "validated": 7,
          "voted": 8,
          "deadline": 600
        },
        "node-1": {
          "announced": 50,
          "body": 120,
          "closure": 250,
          "deadline": 600
        }
      },
      "certify": {
        "node-1": {
          "slot": 22,
          "at": "2025-01-02T03:04:07.201Z",
          "atMs": 1201,
          "votes": 2,
          "outcome": "certified"
        }
      }
    },
    {
      "slot": 20,
      "ebHash": "bb20",
      "forged": "2025-01-02T03:04:07Z",
      "closureMs": {
        "node-0": 3,
        "node-1": 420
      },
      "completeOnAll": true,
      "lastNodeMs": 420,
      "votes": {
        "node-0": "closure incomplete in the voting window"
      },
      "votesSeen": {
        "node-0": 1,
        "node-1": 0
      }
    },
    {
      "slot": 20,
      "ebHash": "cc20",
      "forged": "2025-01-02T03:04:07Z",
      "closureMs": {},
      "completeOnAll": false,
      "votesSeen": {
        "node-1": 0
      }
    },
    {
      "slot": 30,
      "ebHash": "dd30",
      "forged": "2025-01-02T03:04:08Z",
      "closureMs": {
        "node-0": 4,
        "node-1": 130
      },
      "completeOnAll": true,
      "lastNodeMs": 130,
      "votesSeen": {
        "node-0": 0,
        "node-1": 0
      }
    }
  ]
}`
	if string(got) != want {
		t.Errorf("leios report JSON:\n%s\nwant:\n%s", got, want)
	}

	// In the whole report it is the "leios" field.
	full := w.report("/tmp/devnet", clock.Start, clock.Start.Add(time.Minute), 60, make([]string, len(names)))
	full.Leios = r
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["leios"]; !ok {
		t.Errorf("the report lacks leios: %s", b)
	}
	checkFormatted(t, full, "")
}

// TestLeiosReportNoEBs: nodes that answer with no EBs (an empty list, or
// null) give an empty list and a summary without times, not an error.
func TestLeiosReportNoEBs(t *testing.T) {
	_, empty := fakeLeiosNode(apitypes.LeiosStatus{}, `[]`)
	_, null := fakeLeiosNode(apitypes.LeiosStatus{}, `null`)
	w := NewChainWatch([]layout.Node{{Name: "node-0"}, {Name: "node-1"}})
	r := w.leiosReport(consensus.Clock{SlotLength: time.Second}, 10, []EBList{empty, null}, nil)
	b, err := json.Marshal(r.Summary)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"ebsSeen":0,"nodesRead":2,"completeOnAll":0}`; string(b) != want {
		t.Errorf("summary %s, want %s", b, want)
	}
	if r.EBs == nil || len(r.EBs) != 0 {
		t.Errorf("ebs %#v, want an empty list", r.EBs)
	}
	for _, n := range r.Nodes {
		if n.Status != nil || n.Problem != "" {
			t.Errorf("%s: status %+v (never polled), problem %q", n.Name, n.Status, n.Problem)
		}
	}
}

// TestLeiosReportProperty: for any EB lists, an EB is complete on all
// exactly when every node read lists its closure; its LastNodeMs is the
// largest of its times; the summary counts those EBs, and its median lies
// between their least and greatest LastNodeMs, the latter being the max.
func TestLeiosReportProperty(t *testing.T) {
	clock := consensus.Clock{Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), SlotLength: 100 * time.Millisecond}
	rapid.Check(t, func(t *rapid.T) {
		nodeCount := rapid.IntRange(1, 4).Draw(t, "nodes")
		w := watchOf(nodeCount)
		lists := make([]EBList, nodeCount)
		for i := range lists {
			if rapid.IntRange(0, 5).Draw(t, "down") == 0 {
				lists[i].Err = fmt.Errorf("connection refused")
				continue
			}
			for slot := range uint64(rapid.IntRange(0, 6).Draw(t, "slots")) {
				if !rapid.Bool().Draw(t, "listed") {
					continue
				}
				e := apitypes.EBTimes{Slot: slot, EbHash: fmt.Sprintf("eb%d", slot)}
				if rapid.Bool().Draw(t, "complete") {
					at := clock.SlotStart(slot).Add(time.Duration(rapid.IntRange(0, 5000).Draw(t, "ms")) * time.Millisecond)
					e.Closure = &at
				}
				lists[i].EBs = append(lists[i].EBs, e)
			}
		}
		r := w.leiosReport(clock, 10, lists, nil)

		read := 0
		for _, l := range lists {
			if l.Err == nil {
				read++
			}
		}
		var lasts []int64
		for _, eb := range r.EBs {
			holders := 0
			var most int64
			for i, l := range lists {
				if l.Err != nil {
					continue
				}
				for _, e := range l.EBs {
					if e.Slot == eb.Slot && e.EbHash == eb.EbHash && e.Closure != nil {
						holders++
						ms := e.Closure.Sub(clock.SlotStart(e.Slot)).Milliseconds()
						if got := eb.ClosureMs[fmt.Sprintf("node-%d", i)]; got != ms {
							t.Fatalf("EB %d on node-%d: %d ms, want %d", eb.Slot, i, got, ms)
						}
						most = max(most, ms)
					}
				}
			}
			if eb.CompleteOnAll != (holders == read) {
				t.Fatalf("EB %d: complete on all %v, but %d of %d nodes hold it", eb.Slot, eb.CompleteOnAll, holders, read)
			}
			if eb.CompleteOnAll {
				if eb.LastNodeMs == nil || *eb.LastNodeMs != most {
					t.Fatalf("EB %d: last node %v, want %d", eb.Slot, eb.LastNodeMs, most)
				}
				lasts = append(lasts, most)
			}
		}
		s := r.Summary
		if s.NodesRead != read || s.CompleteOnAll != len(lasts) || s.EBsSeen != len(r.EBs) {
			t.Fatalf("summary %+v; %d nodes read, %d complete, %d EBs", s, read, len(lasts), len(r.EBs))
		}
		if len(lasts) == 0 {
			if s.MedianToLastNodeMs != nil || s.MaxToLastNodeMs != nil {
				t.Fatalf("times without complete EBs: %+v", s)
			}
			return
		}
		if *s.MaxToLastNodeMs != slices.Max(lasts) || *s.MedianToLastNodeMs < slices.Min(lasts) || *s.MedianToLastNodeMs > *s.MaxToLastNodeMs {
			t.Fatalf("median %d, max %d of %v", *s.MedianToLastNodeMs, *s.MaxToLastNodeMs, lasts)
		}
	})
}

func TestMedianOfSorted(t *testing.T) {
	tests := []struct {
		xs   []int64
		want int64
	}{
		{[]int64{7}, 7},
		{[]int64{1, 9}, 5},
		{[]int64{1, 2, 400}, 2},
		{[]int64{10, 20, 30, 41}, 25},
	}
	for _, tt := range tests {
		if got := medianOfSorted(tt.xs); got != tt.want {
			t.Errorf("median of %v = %d, want %d", tt.xs, got, tt.want)
		}
	}
}

// TestAwaitedPrinted: the nodes whose mempools admitted relayed txs once
// their inputs came are named with their counts; the others are not.
func TestAwaitedPrinted(t *testing.T) {
	var out strings.Builder
	printAwaited(&out, []NodeReport{{Name: "node-0"}, {Name: "node-1"}})
	if out.Len() != 0 {
		t.Errorf("printed with nothing awaited: %q", out.String())
	}
	printAwaited(&out, []NodeReport{{Name: "node-0", Mempool: apitypes.MempoolStatus{Awaited: 12}}, {Name: "node-1"}, {Name: "node-2", Mempool: apitypes.MempoolStatus{Awaited: 3}}})
	if want := "relayed txs admitted once their inputs came (whole run): node-0 12, node-2 3\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}
