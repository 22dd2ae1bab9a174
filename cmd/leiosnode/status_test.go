package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/node"
)

func TestPollStatuses(t *testing.T) {
	want := node.Status{Slot: 42, Tip: node.TipStatus{BlockNumber: 7, Slot: 40, Hash: "abcdef0123456789"}, Peers: []string{"x"}}
	answering := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(want)
	}))
	defer answering.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	garbled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("{not json"))
	}))
	defer garbled.Close()
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answers only when the poll gives up
	}))
	defer hung.Close()
	// A port nobody listens on: bind one, then free it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := l.Addr().String()
	l.Close()

	nodes := []devnetNode{
		{Name: "up", HTTPAddr: strings.TrimPrefix(answering.URL, "http://")},
		{Name: "failing", HTTPAddr: strings.TrimPrefix(failing.URL, "http://")},
		{Name: "garbled", HTTPAddr: strings.TrimPrefix(garbled.URL, "http://")},
		{Name: "hung", HTTPAddr: strings.TrimPrefix(hung.URL, "http://")},
		{Name: "closed", HTTPAddr: closedAddr},
	}
	start := time.Now()
	polls := pollStatuses(context.Background(), &http.Client{}, nodes)
	if took := time.Since(start); took > 3*pollTimeout {
		t.Errorf("a poll round took %v; the hung node should cost at most %v", took, pollTimeout)
	}
	if polls[0].Err != nil || polls[0].Status == nil || polls[0].Status.Tip != want.Tip || polls[0].Status.Slot != 42 {
		t.Errorf("answering node: %+v", polls[0])
	}
	for i, p := range polls[1:] {
		if p.Status != nil || p.Err == nil {
			t.Errorf("%s: status %+v, err %v; want an error", nodes[i+1].Name, p.Status, p.Err)
		}
	}
	if !strings.Contains(polls[1].Err.Error(), "503") {
		t.Errorf("failing node's error %v does not name the status", polls[1].Err)
	}
}

func TestStatusLine(t *testing.T) {
	clock := consensus.Clock{Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), SlotLength: 100 * time.Millisecond}
	polls := []nodePoll{
		{Status: &node.Status{Tip: node.TipStatus{BlockNumber: 12, Hash: "3fa9c1d2e5e6"}, ImmutableTip: node.TipStatus{BlockNumber: 2}, Peers: []string{"a", "b"}}},
		{Status: &node.Status{}},
		down,
		down,
	}
	names := []string{"node-0", "node-1", "node-2", "node-3"}
	exits := []string{"", "", "exited: signal: killed", ""}

	got := statusLine(clock, clock.Start.Add(12345*time.Millisecond), names, polls, exits)
	want := "slot    123 | node-0 #12 3fa9c1d2 imm #2 peers 2 | node-1 #0 - imm #0 peers 0 | node-2 down (exited: signal: killed) | node-3 down"
	if got != want {
		t.Errorf("status line\n%q\nwant\n%q", got, want)
	}
	if got := statusLine(clock, clock.Start.Add(-1500*time.Millisecond), names[:1], polls[:1], exits[:1]); !strings.HasPrefix(got, "starts in  1.5s | node-0 #12") {
		t.Errorf("before the start: %q", got)
	}
}
