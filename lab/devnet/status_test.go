package devnet

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
)

var down = apiclient.StatusPoll{Err: errors.New("connection refused")}

func TestStatusLine(t *testing.T) {
	clock := consensus.Clock{Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), SlotLength: 100 * time.Millisecond}
	polls := []apiclient.StatusPoll{
		{Status: &apitypes.Status{Tip: apitypes.TipStatus{BlockNumber: 12, Hash: "3fa9c1d2e5e6"}, ImmutableTip: apitypes.TipStatus{BlockNumber: 2}, Peers: []apitypes.Peer{{ID: "a"}, {ID: "b"}}, Mempool: apitypes.MempoolStatus{Txs: 17, Bytes: 4000},
			Leios: apitypes.LeiosStatus{EBsForged: 1, EBsAnnounced: 5, BodiesHeld: 4, ClosuresComplete: 3, EBsCertified: 2, MissingTxs: 90}}},
		{Status: &apitypes.Status{}},
		down,
		down,
	}
	names := []string{"node-0", "node-1", "node-2", "node-3"}
	exits := []string{"", "", "exited: signal: killed", ""}
	txs := txLine{Submitted: 1234, OnChain: 1200, PerSecond: 19.96}

	got := statusLine(clock, clock.Start.Add(12345*time.Millisecond), names, polls, exits, txs)
	want := "slot    123 | node-0 #12 3fa9c1d2 imm #2 peers 2 mempool 17 EBs 5/4/3 cert 2 | node-1 #0 - imm #0 peers 0 mempool 0 EBs 0/0/0 cert 0 | node-2 down (exited: signal: killed) | node-3 down | txs 1234 sent 1200 on chain 20.0/s"
	if got != want {
		t.Errorf("status line\n%q\nwant\n%q", got, want)
	}
	if got := statusLine(clock, clock.Start.Add(-1500*time.Millisecond), names[:1], polls[:1], exits[:1], txLine{}); !strings.HasPrefix(got, "starts in  1.5s | node-0 #12") {
		t.Errorf("before the start: %q", got)
	}
}

func TestMaxTxsOnChain(t *testing.T) {
	polls := []apiclient.StatusPoll{
		{Status: &apitypes.Status{TxsOnChain: 40}},
		down,
		{Status: &apitypes.Status{TxsOnChain: 42}},
	}
	if got := maxTxsOnChain(polls); got != 42 {
		t.Errorf("maxTxsOnChain = %d, want 42", got)
	}
	if got := maxTxsOnChain([]apiclient.StatusPoll{down}); got != 0 {
		t.Errorf("maxTxsOnChain of no answer = %d, want 0", got)
	}
}

func TestOnChainRate(t *testing.T) {
	at := func(s float64) time.Time {
		return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second)))
	}
	type sample struct {
		second  float64
		onChain uint64
	}
	tests := []struct {
		name    string
		samples []sample
		want    float64
	}{
		{"no sample", nil, 0},
		{"one sample", []sample{{0, 100}}, 0},
		{"steady", []sample{{0, 0}, {1, 20}, {2, 40}, {3, 60}}, 20},
		// Measured from the newest sample at least ten seconds old (second
		// 2): the burst before it is gone.
		{"window slides", []sample{{0, 0}, {1, 500}, {2, 500}, {6, 540}, {11, 600}, {12, 610}}, 11},
		{"a node restarted empty", []sample{{0, 100}, {1, 0}}, 0},
		{"flat", []sample{{0, 7}, {5, 7}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newOnChainRate(10 * time.Second)
			for _, s := range tt.samples {
				r.observe(at(s.second), s.onChain)
			}
			if got := r.perSecond(); got < tt.want-1e-9 || got > tt.want+1e-9 {
				t.Errorf("perSecond = %v, want %v", got, tt.want)
			}
		})
	}
}
func TestInFlightGrace(t *testing.T) {
	tmpl, err := layout.LoadTemplate("")
	if err != nil {
		t.Fatal(err)
	}
	g := tmpl.Genesis() // 100 ms slots, f = 0.1: a block a second
	if got, want := inFlightGrace(g), 200*time.Millisecond+5*time.Second; got != want {
		t.Errorf("grace %v, want %v", got, want)
	}
}
