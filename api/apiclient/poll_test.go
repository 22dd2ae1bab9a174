package apiclient

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
)

func TestPollStatuses(t *testing.T) {
	want := apitypes.Status{Slot: 42, Tip: apitypes.TipStatus{BlockNumber: 7, Slot: 40, Hash: "abcdef0123456789"}, Peers: []apitypes.Peer{{ID: "x"}}}
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

	names := []string{"up", "failing", "garbled", "hung", "closed"}
	var nodes []Client
	for _, url := range []string{answering.URL, failing.URL, garbled.URL, hung.URL, "http://" + closedAddr} {
		nodes = append(nodes, New(&http.Client{}, url))
	}
	start := time.Now()
	polls := PollStatuses(context.Background(), nodes)
	if took := time.Since(start); took > 3*pollTimeout {
		t.Errorf("a poll round took %v; the hung node should cost at most %v", took, pollTimeout)
	}
	if polls[0].Err != nil || polls[0].Status == nil || polls[0].Status.Tip != want.Tip || polls[0].Status.Slot != 42 {
		t.Errorf("answering node: %+v", polls[0])
	}
	for i, p := range polls[1:] {
		if p.Status != nil || p.Err == nil {
			t.Errorf("%s: status %+v, err %v; want an error", names[i+1], p.Status, p.Err)
		}
	}
	if !strings.Contains(polls[1].Err.Error(), "503") {
		t.Errorf("failing node's error %v does not name the status", polls[1].Err)
	}
}
