package fetch

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/internal/logging"
	"github.com/leiosnode/leiosnode/network"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
)

// sessions returns a client and a server session of LeiosFetch over a
// pipe, and each side's violation.
func sessions(t *testing.T) (client, server *protocol.Session, cv, sv <-chan error) {
	t.Helper()
	return protocoltest.Sessions(t, context.Background(), Spec(testLimits))
}

func bodyRequest(id uint64, eb *blocktest.EB, slot uint64) *Request {
	return &Request{ID: id, Kind: RequestBody, Point: eb.Point(slot), EbSize: eb.Body.Size(), Bytes: eb.Body.Size()}
}

func txsRequest(id uint64, eb *blocktest.EB, slot uint64, offsets ...int) *Request {
	r := &Request{ID: id, Kind: RequestTxs, Point: eb.Point(slot), Offsets: offsets}
	for _, off := range offsets {
		r.TxHashes = append(r.TxHashes, eb.Body.Txs[off].TxHash)
		r.Bytes += uint64(eb.Body.Txs[off].Size)
	}
	return r
}

// The server answers pipelined requests from the LeiosDB, in order, and
// the client checks and returns them.
func TestClientServerPipelined(t *testing.T) {
	db := openDB(t, t.TempDir())
	eb := blocktest.NewEB(t, 200, blocktest.Seeds(0, 150)...)
	storeEB(t, db, 10, eb, eb.Txs)
	client, server, cv, sv := sessions(t)
	served := make(chan error, 1)
	go func() { served <- (&Server{Store: db, Logger: quietLogger()}).Serve(context.Background(), server) }()

	c := NewClient(client, testLimits)
	reqs := []*Request{
		bodyRequest(1, eb, 10),
		txsRequest(2, eb, 10, 0, 63, 64, 149),
		txsRequest(3, eb, 10, seedsInt(0, 150)...),
	}
	for _, r := range reqs {
		if err := c.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range reqs {
		r, reply, err := c.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r != want {
			t.Fatalf("reply to %v, want to %v", r, want)
		}
		switch r.Kind {
		case RequestBody:
			if reply.Body.Hash() != eb.Body.Hash() {
				t.Fatal("wrong body")
			}
		case RequestTxs:
			for i, off := range r.Offsets {
				if !slices.Equal(reply.Txs[i].Bytes, eb.Txs[off]) || reply.Txs[i].Hash != block.HashBytes(eb.Txs[off]) {
					t.Fatalf("tx %d is not the tx at offset %d", i, off)
				}
			}
		}
	}
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("server: %v", err)
	}
	select {
	case err := <-cv:
		t.Fatalf("client violation %v", err)
	case err := <-sv:
		t.Fatalf("server violation %v", err)
	default:
	}
}

// What the server does not hold ends the session without a violation;
// offsets beyond the body are the client's violation.
func TestServerRefusals(t *testing.T) {
	db := openDB(t, t.TempDir())
	held := blocktest.NewEB(t, 200, 1, 2)
	storeEB(t, db, 10, held, held.Txs)
	partial := blocktest.NewEB(t, 200, 3, 4)
	storeEB(t, db, 11, partial, nil)
	unknown := blocktest.NewEB(t, 200, 5)
	for _, tc := range []struct {
		name      string
		req       *Request
		want      error
		violation bool
	}{
		{"unknown point", bodyRequest(1, unknown, 12), ErrNotHeld, false},
		{"wrong slot", bodyRequest(1, held, 11), ErrNotHeld, false},
		{"tx not held", txsRequest(1, partial, 11, 1), ErrNotHeld, false},
		{"offset beyond the body", &Request{ID: 1, Kind: RequestTxs, Point: held.Point(10), Offsets: []int{2}, TxHashes: []block.Hash{{}}}, ErrBadRequest, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server, _, sv := sessions(t)
			served := make(chan error, 1)
			go func() { served <- (&Server{Store: db, Logger: quietLogger()}).Serve(context.Background(), server) }()
			c := NewClient(client, testLimits)
			if err := c.Send(tc.req); err != nil {
				t.Fatal(err)
			}
			err := <-served
			if !errors.Is(err, tc.want) {
				t.Fatalf("server ended with %v, want %v", err, tc.want)
			}
			server.Fail(err) // as the host does with what Serve returns
			if _, _, err := c.Next(context.Background()); !errors.Is(err, protocol.ErrClosed) {
				t.Fatalf("client: %v, want the session closed", err)
			}
			select {
			case v := <-sv:
				if !tc.violation {
					t.Fatalf("reported as a violation: %v", v)
				}
			default:
				if tc.violation {
					t.Fatal("not reported as a violation")
				}
			}
		})
	}
}

// A server that answers wrongly is caught: each case is a violation that
// ends the session.
func TestClientChecksReplies(t *testing.T) {
	eb := blocktest.NewEB(t, 200, 1, 2, 3)
	other := blocktest.NewEB(t, 200, 4, 5, 6)
	txs := func(offsets ...int) [][]byte {
		var out [][]byte
		for _, off := range offsets {
			out = append(out, eb.Txs[off])
		}
		return out
	}
	forged := slices.Clone(eb.Txs[1])
	forged[len(forged)-1] ^= 1
	// A body whose hash and size match the request but which is invalid
	// (the same tx twice).
	dupRaw := unhex(t, "a2 5820"+hexOf(eb.Body.Txs[0].TxHash)+"18c8 5820"+hexOf(eb.Body.Txs[0].TxHash)+"18c8")
	dup := &Request{ID: 1, Kind: RequestBody, Point: block.Point{Slot: 10, Hash: block.HashBytes(dupRaw)}, EbSize: uint64(len(dupRaw))}
	for _, tc := range []struct {
		name  string
		req   *Request
		reply protocol.Message
		want  error
	}{
		{"tx with a wrong hash", txsRequest(1, eb, 10, 0, 1), &MsgBlockTxs{Point: eb.Point(10), Bitmaps: mustBitmaps(t, 0, 1), Txs: [][]byte{eb.Txs[0], forged}}, ErrBadTxs},
		{"txs in the wrong order", txsRequest(1, eb, 10, 0, 1), &MsgBlockTxs{Point: eb.Point(10), Bitmaps: mustBitmaps(t, 0, 1), Txs: txs(1, 0)}, ErrBadTxs},
		{"the same tx twice", txsRequest(1, eb, 10, 0, 1), &MsgBlockTxs{Point: eb.Point(10), Bitmaps: mustBitmaps(t, 0, 1), Txs: txs(0, 0)}, ErrBadTxs},
		{"txs of other offsets", txsRequest(1, eb, 10, 0, 1), &MsgBlockTxs{Point: eb.Point(10), Bitmaps: mustBitmaps(t, 1, 2), Txs: txs(1, 2)}, ErrBadTxs},
		{"txs of another point", txsRequest(1, eb, 10, 0), &MsgBlockTxs{Point: eb.Point(11), Bitmaps: mustBitmaps(t, 0), Txs: txs(0)}, ErrBadTxs},
		{"another body", bodyRequest(1, eb, 10), &MsgBlock{Body: other.Body.Bytes()}, ErrBadBody},
		{"a body of another size than announced", &Request{ID: 1, Kind: RequestBody, Point: eb.Point(10), EbSize: eb.Body.Size() + 1}, &MsgBlock{Body: eb.Body.Bytes()}, ErrBadBody},
		{"an invalid body", dup, &MsgBlock{Body: dupRaw}, ErrBadBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server, cv, _ := sessions(t)
			go func() {
				if _, err := server.Recv(context.Background()); err == nil {
					_ = server.Send(tc.reply)
				}
			}()
			c := NewClient(client, testLimits)
			if err := c.Send(tc.req); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Next(context.Background()); !errors.Is(err, tc.want) {
				t.Fatalf("Next: %v, want %v", err, tc.want)
			}
			if err := <-cv; !errors.Is(err, tc.want) {
				t.Fatalf("reported %v", err)
			}
		})
	}
}

func mustBitmaps(t *testing.T, offsets ...int) Bitmaps {
	bm, err := BitmapsOf(offsets)
	if err != nil {
		t.Fatal(err)
	}
	return bm
}

func hexOf(h block.Hash) string { return h.String() }

// A client that asks again and again for what the server does not hold,
// a stream each time, spends its budget of useless requests: the server
// ends the first few sessions without a violation, then each is one
// (network.ErrWasteful); and the not-held line is logged a few times with
// the count of those held back, not once a request.
func TestNotHeldSpendsThePeersBudget(t *testing.T) {
	db := openDB(t, t.TempDir())
	unknown := blocktest.NewEB(t, 200, 5)
	budget := network.NewWasteBudget(1, 5*notHeldCost)
	var logs bytes.Buffer
	srv := &Server{Store: db, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Waste: func(_ context.Context, n int, what string) error { return budget.Spend(n, what) }}
	violations := 0
	const requests = 200
	for i := range requests {
		client, server, _, sv := sessions(t)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(context.Background(), server) }()
		if err := NewClient(client, testLimits).Send(bodyRequest(1, unknown, 12)); err != nil {
			t.Fatal(err)
		}
		err := <-served
		server.Fail(err) // as the host does with what Serve returns
		if !errors.Is(err, ErrNotHeld) {
			t.Fatalf("request %d: server ended with %v, want ErrNotHeld", i, err)
		}
		select {
		case v := <-sv:
			if !errors.Is(v, network.ErrWasteful) {
				t.Fatalf("request %d: violation %v, want ErrWasteful", i, v)
			}
			violations++
		default:
			if i >= 6 { // 5 in the burst, and one refilled meanwhile at most
				t.Fatalf("request %d past the budget was no violation", i)
			}
		}
		client.Close()
		server.Close()
	}
	if violations < requests-6 {
		t.Fatalf("%d violations, want one for each of the %d past the budget", violations, requests-5)
	}
	if lines := strings.Count(logs.String(), "request for EB data not held"); lines > logging.DefaultBurst {
		t.Fatalf("%d lines for %d requests, want at most %d a minute:\n%s", lines, requests, logging.DefaultBurst, logs.String())
	}
}
