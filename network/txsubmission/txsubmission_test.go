package txsubmission_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type pipeStream struct{ net.Conn }

func (p pipeStream) Reset() error { return p.Conn.Close() }

// link is one tx-submission session over a pipe: its client end serves
// txs, its server end pulls them. Each end's violations (by the other end)
// arrive on its channel.
type link struct {
	client, server                   *protocol.Session
	clientViolation, serverViolation chan error
}

func newLink(t *testing.T, ctx context.Context) *link {
	t.Helper()
	l := openLink(ctx)
	t.Cleanup(l.close)
	return l
}

// runSide runs one side of a link, on s, until the test ends; its result
// arrives on the channel.
func runSide(t *testing.T, s *protocol.Session, run func(context.Context, *protocol.Session) error) <-chan error {
	done, finished := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(finished)
		done <- run(s.Context(), s)
	}()
	t.Cleanup(func() { s.Close(); <-finished })
	return done
}

// handServer plays the server by hand against a real client.
type handServer struct{ hand }

// startClient runs a real client of mempool on a link and returns the
// hand-played server (init already received) and the client's result.
func startClient(t *testing.T, mempool *memMempool, opts txsubmission.Options) (*link, *handServer, <-chan error) {
	t.Helper()
	l := newLink(t, context.Background())
	done := runSide(t, l.client, txsubmission.NewClient(mempool, opts).Run)
	hs := &handServer{hand{t: t, s: l.server, who: "hand server"}}
	if _, ok := hs.recv().(*txsubmission.MsgInit); !ok {
		t.Fatal("client did not send init first")
	}
	return l, hs, done
}

// handClient plays the client by hand against a real server.
type handClient struct{ hand }

// startServer runs a real server into mempool on a link and returns the
// hand-played client (init already sent) and the server's result.
func startServer(t *testing.T, mempool *memMempool, opts txsubmission.Options) (*link, *handClient, <-chan error) {
	t.Helper()
	l := newLink(t, context.Background())
	hc := &handClient{hand{t: t, s: l.client, who: "hand client"}}
	hc.send(&txsubmission.MsgInit{}) // the session reads it ahead of the server
	return l, hc, runSide(t, l.server, txsubmission.NewServer(mempool, opts).Serve)
}

// hand plays one side of a link by hand; who names it in failures.
type hand struct {
	t   *testing.T
	s   *protocol.Session
	who string
}

func (h *hand) recv() protocol.Message {
	h.t.Helper()
	m, err := h.s.Recv(context.Background())
	if err != nil {
		h.t.Fatalf("%s: %v", h.who, err)
	}
	return m
}

func (h *hand) send(m protocol.Message) {
	h.t.Helper()
	if err := h.s.Send(m); err != nil {
		h.t.Fatalf("%s: send %T: %v", h.who, m, err)
	}
}

func openLink(ctx context.Context) *link {
	a, b := net.Pipe()
	l := &link{clientViolation: make(chan error, 1), serverViolation: make(chan error, 1)}
	spec := txsubmission.Spec()
	l.client = protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Client, Stream: pipeStream{a}, OnViolation: func(err error) { l.clientViolation <- err }})
	l.server = protocol.NewSession(ctx, protocol.Config{Spec: spec, Role: protocol.Server, Stream: pipeStream{b}, OnViolation: func(err error) { l.serverViolation <- err }})
	return l
}

func (l *link) close() { l.client.Close(); l.server.Close() }

// connect runs a real client serving from's txs and a real server pulling
// them into to, until the test ends.
func connect(t *testing.T, from, to *memMempool, opts txsubmission.Options) *link {
	t.Helper()
	l, stop := run(from, to, opts)
	t.Cleanup(stop)
	return l
}

// run is connect until stop is called.
func run(from, to *memMempool, opts txsubmission.Options) (l *link, stop func()) {
	var wg sync.WaitGroup
	l = openLink(context.Background())
	wg.Go(func() { _ = txsubmission.NewClient(from, opts).Run(l.client.Context(), l.client) })
	wg.Go(func() { _ = txsubmission.NewServer(to, opts).Serve(l.server.Context(), l.server) })
	return l, func() { l.close(); wg.Wait() }
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// noViolation fails if either end of l reported one.
func noViolation(t *testing.T, l *link) {
	t.Helper()
	select {
	case err := <-l.clientViolation:
		t.Fatalf("client reported %v", err)
	case err := <-l.serverViolation:
		t.Fatalf("server reported %v", err)
	default:
	}
}

func TestSpecValidates(t *testing.T) {
	spec := txsubmission.Spec()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if spec.ID() != "/leios/txsubmission/1" {
		t.Fatalf("protocol ID %s", spec.ID())
	}
	// Txs are due within shortWait, as in Cardano; where the Cardano node
	// waits for ever, the waits here are long but bounded.
	for state, want := range map[protocol.State]time.Duration{
		txsubmission.StInit: txsubmission.ShortWait, txsubmission.StIdle: protocol.IdleWait,
		txsubmission.StTxIds: protocol.HeldWait, txsubmission.StTxs: txsubmission.ShortWait,
	} {
		if got := spec.States[state].Timeout; got != want {
			t.Errorf("state %s: timeout %v, want %v", state, got, want)
		}
	}
}

// TestTxsFlowBothWays: txs added at either end reach the other; each tx is
// served once, to the side that lacked it, and never echoed back.
func TestTxsFlowBothWays(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts txsubmission.Options
	}{
		{"defaults", txsubmission.Options{}},
		{"small window", txsubmission.Options{MaxUnackedTxIds: 4, MaxTxsPerRequest: 3}},
		{"one tx per request", txsubmission.Options{MaxUnackedTxIds: 2, MaxRequestBytes: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWallet(2)
			a, b := newMempool(w.genesis()), newMempool(w.genesis())
			ab, ba := connect(t, a, b, tc.opts), connect(t, b, a, tc.opts)
			fromA, fromB := w.txs(t, 0, 40), w.txs(t, 1, 40)
			for i := range 40 { // interleaved, so both directions run at once
				a.mustAdd(t, fromA[i])
				b.mustAdd(t, fromB[i])
			}
			all := append(append([]*ledger.Tx(nil), fromA...), fromB...)
			eventually(t, "both hold every tx", func() bool { return a.holdsAll(all) && b.holdsAll(all) })
			for _, tx := range fromA {
				if n, echo := a.served(tx.Hash()), b.served(tx.Hash()); n != 1 || echo != 0 {
					t.Fatalf("tx of A served %d times by A, %d by B; want 1 and 0", n, echo)
				}
			}
			for _, tx := range fromB {
				if n, echo := b.served(tx.Hash()), a.served(tx.Hash()); n != 1 || echo != 0 {
					t.Fatalf("tx of B served %d times by B, %d by A; want 1 and 0", n, echo)
				}
			}
			noViolation(t, ab)
			noViolation(t, ba)
		})
	}
}

// TestBlockingRequestWakesOnNewTx: with nothing to announce the server's
// request blocks at the client, and a tx added later is announced at once.
func TestBlockingRequestWakesOnNewTx(t *testing.T) {
	w := newWallet(1)
	a, b := newMempool(w.genesis()), newMempool(w.genesis())
	l := connect(t, a, b, txsubmission.Options{})
	for i, tx := range w.txs(t, 0, 3) {
		eventually(t, "the server waits on a blocking request", func() bool { return l.client.State() == txsubmission.StTxIds })
		time.Sleep(10 * time.Millisecond) // nothing moves while the mempool does not
		if l.client.State() != txsubmission.StTxIds || b.len() != i {
			t.Fatalf("state %s with %d txs at B, want a blocked request and %d", l.client.State(), b.len(), i)
		}
		a.mustAdd(t, tx)
		eventually(t, "the new tx reaches B", func() bool { return b.Has(tx.Hash()) })
	}
	noViolation(t, l)
}
