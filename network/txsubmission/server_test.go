package txsubmission_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// requestTxIds receives the server's next request, which must ask for ids.
func (hc *handClient) requestTxIds() *txsubmission.MsgRequestTxIds {
	hc.t.Helper()
	m := hc.recv()
	req, ok := m.(*txsubmission.MsgRequestTxIds)
	if !ok {
		hc.t.Fatalf("hand client: got %T, want request tx ids", m)
	}
	return req
}

// requestTxs receives the server's next request, which must ask for txs.
func (hc *handClient) requestTxs() []block.Hash {
	hc.t.Helper()
	m := hc.recv()
	req, ok := m.(*txsubmission.MsgRequestTxs)
	if !ok {
		hc.t.Fatalf("hand client: got %T, want request txs", m)
	}
	return req.IDs
}

// announce answers the pending ids request.
func (hc *handClient) announce(ids ...txsubmission.TxIDAndSize) {
	hc.t.Helper()
	hc.send(&txsubmission.MsgReplyTxIds{IDs: append([]txsubmission.TxIDAndSize{}, ids...)})
}

// serve answers the pending txs request.
func (hc *handClient) serve(txs ...[]byte) {
	hc.t.Helper()
	hc.send(&txsubmission.MsgReplyTxs{Txs: append([][]byte{}, txs...)})
}

func wantRequest(t *testing.T, got *txsubmission.MsgRequestTxIds, blocking bool, ack, req uint16) {
	t.Helper()
	if got.Blocking != blocking || got.Ack != ack || got.Req != req {
		t.Fatalf("request tx ids %+v, want blocking=%v ack=%d req=%d", *got, blocking, ack, req)
	}
}

// TestServerFetchesOnlyWhatItLacks: of the announced ids, the server asks
// only for those it neither holds nor rejected, each once, then adds them
// and acknowledges all.
func TestServerFetchesOnlyWhatItLacks(t *testing.T) {
	w := newWallet(2)
	mp := newMempool(w.genesis())
	held := w.txs(t, 0, 1)[0]
	mp.mustAdd(t, held)
	rejected := w.forged(t, 1, 1)[0]
	if err := mp.Add(context.Background(), rejected.Bytes()); !errors.Is(err, ledger.ErrMissingWitness) {
		t.Fatalf("forged tx: %v", err)
	}
	fresh := w.txs(t, 1, 2)
	l, hc, _ := startServer(t, mp, txsubmission.Options{})

	wantRequest(t, hc.requestTxIds(), true, 0, txsubmission.MaxUnackedLimit)
	hc.announce(announced(held, rejected, fresh[0], fresh[0], fresh[1])...)
	if got := hc.requestTxs(); !slices.Equal(got, hashes(fresh)) {
		t.Fatalf("server asked for %v, want only the fresh txs %v", got, hashes(fresh))
	}
	hc.serve(raws(fresh...)...)
	wantRequest(t, hc.requestTxIds(), true, 5, txsubmission.MaxUnackedLimit)
	if !mp.holdsAll(fresh) {
		t.Fatal("fetched txs not in the mempool")
	}
	noViolation(t, l)
}

// TestServerWindow: the server tops up its window without blocking while it
// still has txs to fetch, never asks beyond it, and fetches in batches
// bounded by count and by announced bytes.
func TestServerWindow(t *testing.T) {
	w := newWallet(7)
	mp := newMempool(w.genesis())
	var txs []*ledger.Tx // independent, all of one size
	for k := range 7 {
		txs = append(txs, w.txs(t, k, 1)...)
	}
	size := uint32(txs[0].Size())
	l, hc, _ := startServer(t, mp, txsubmission.Options{MaxUnackedTxIds: 4, MaxTxsPerRequest: 2, MaxRequestBytes: int(size) + 1})

	wantRequest(t, hc.requestTxIds(), true, 0, 4)
	hc.announce(announced(txs[:3]...)...)
	// The byte bound allows one tx of this size per request.
	if got := hc.requestTxs(); !slices.Equal(got, hashes(txs[:1])) {
		t.Fatalf("first batch %v", got)
	}
	hc.serve(txs[0].Bytes())
	// 2 left to fetch, not fewer than a batch: fetch on.
	if got := hc.requestTxs(); !slices.Equal(got, hashes(txs[1:2])) {
		t.Fatalf("second batch %v", got)
	}
	hc.serve(txs[1].Bytes())
	// 1 left, below a batch: top up the window (2 done, 1 outstanding).
	wantRequest(t, hc.requestTxIds(), false, 2, 3)
	hc.announce(announced(txs[3:6]...)...)
	for _, tx := range txs[2:6] {
		if got := hc.requestTxs(); !slices.Equal(got, hashes([]*ledger.Tx{tx})) {
			t.Fatalf("batch %v, want %s", got, block.Hash(tx.Hash()).Short())
		}
		if tx == txs[4] { // the client no longer holds it: left out
			hc.serve()
		} else {
			hc.serve(tx.Bytes())
		}
		if tx == txs[4] {
			// 1 left: top up; the client has nothing new.
			wantRequest(t, hc.requestTxIds(), false, 3, 3)
			hc.announce()
		}
	}
	wantRequest(t, hc.requestTxIds(), true, 1, 4)
	hc.announce(announced(txs[6])...)
	if got := hc.requestTxs(); !slices.Equal(got, hashes(txs[6:])) {
		t.Fatalf("last batch %v", got)
	}
	hc.serve(txs[6].Bytes())
	wantRequest(t, hc.requestTxIds(), true, 1, 4)
	if mp.len() != 6 || mp.Has(txs[4].Hash()) {
		t.Fatalf("mempool holds %d txs, want the 6 served", mp.len())
	}
	noViolation(t, l)
}

// TestServerChecksReplies plays clients whose replies are not what was
// asked for; nothing of a bad reply reaches the mempool.
func TestServerChecksReplies(t *testing.T) {
	w := newWallet(1)
	txs := w.txs(t, 0, 3)
	for _, tc := range []struct {
		name string
		opts txsubmission.Options
		play func(hc *handClient) // the last reply is the bad one
		want error
		kept int // txs of good replies before the bad one
	}{
		{"more ids than requested", txsubmission.Options{MaxUnackedTxIds: 2}, func(hc *handClient) {
			hc.requestTxIds()
			hc.announce(announced(txs...)...)
		}, txsubmission.ErrTooManyTxIds, 0},
		{"no ids for a blocking request", txsubmission.Options{}, func(hc *handClient) {
			hc.requestTxIds()
			hc.announce()
		}, txsubmission.ErrEmptyBlockingReply, 0},
		{"done to a non-blocking request", txsubmission.Options{MaxTxsPerRequest: 2}, func(hc *handClient) {
			hc.requestTxIds()
			hc.announce(announced(txs...)...)
			hc.requestTxs()
			hc.serve(raws(txs[:2]...)...)
			if !hc.requestTxIds().Blocking {
				hc.send(&txsubmission.MsgDone{})
			}
		}, txsubmission.ErrUnexpectedDone, 2},
		{"size zero", txsubmission.Options{}, func(hc *handClient) {
			hc.requestTxIds()
			hc.announce(txsubmission.TxIDAndSize{ID: txs[0].Hash()})
		}, txsubmission.ErrBadTxSize, 0},
		{"size above the max tx size", txsubmission.Options{}, func(hc *handClient) {
			hc.requestTxIds()
			hc.announce(txsubmission.TxIDAndSize{ID: txs[0].Hash(), Size: 16385})
		}, txsubmission.ErrBadTxSize, 0},
		{"tx not requested", txsubmission.Options{}, func(hc *handClient) {
			hc.requestTxIds()
			hc.announce(announced(txs[0])...)
			hc.requestTxs()
			hc.serve(txs[1].Bytes())
		}, txsubmission.ErrUnrequestedTx, 0},
		{"more txs than requested", txsubmission.Options{}, func(hc *handClient) {
			hc.requestTxIds()
			hc.announce(announced(txs[0])...)
			hc.requestTxs()
			hc.serve(txs[0].Bytes(), txs[0].Bytes())
		}, txsubmission.ErrUnrequestedTx, 0},
		{"txs out of order", txsubmission.Options{}, func(hc *handClient) {
			hc.requestTxIds()
			hc.announce(announced(txs[0], txs[1])...)
			hc.requestTxs()
			hc.serve(txs[1].Bytes(), txs[0].Bytes())
		}, txsubmission.ErrUnrequestedTx, 0},
		{"size other than announced", txsubmission.Options{}, func(hc *handClient) {
			hc.requestTxIds()
			hc.announce(txsubmission.TxIDAndSize{ID: txs[0].Hash(), Size: uint32(txs[0].Size()) - 1})
			hc.requestTxs()
			hc.serve(txs[0].Bytes())
		}, txsubmission.ErrSizeMismatch, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := newMempool(w.genesis())
			l, hc, done := startServer(t, mp, tc.opts)
			tc.play(hc)
			if err := <-done; !errors.Is(err, tc.want) {
				t.Fatalf("server ended with %v, want %v", err, tc.want)
			}
			if err := <-l.serverViolation; !errors.Is(err, tc.want) {
				t.Fatalf("reported %v, want %v", err, tc.want)
			}
			if n := mp.len(); n != tc.kept {
				t.Fatalf("mempool holds %d txs, want the %d of good replies only", n, tc.kept)
			}
		})
	}
}

// TestServerDone: a client may end the protocol in reply to a blocking
// request; the server returns cleanly.
func TestServerDone(t *testing.T) {
	l, hc, done := startServer(t, newMempool(newWallet(1).genesis()), txsubmission.Options{})
	hc.requestTxIds()
	hc.send(&txsubmission.MsgDone{})
	if err := <-done; err != nil {
		t.Fatalf("server ended with %v", err)
	}
	noViolation(t, l)
}

// TestInvalidTxThreshold: txs invalid whatever the ledger state are counted
// per peer, and one past the threshold within the window is a violation;
// txs that only conflict with our ledger state are not counted.
func TestInvalidTxThreshold(t *testing.T) {
	w := newWallet(2)
	forged := w.forged(t, 0, 30)
	// Valid signatures over inputs that are not in our UTxO: a peer whose
	// ledger differs from ours sends such txs in good faith.
	var conflicting []*ledger.Tx
	for i := range 30 {
		in := ledger.TxIn{TxID: [32]byte{byte(i), 1}, Index: 0}
		tx, err := ledger.BuildPayment(params, []ledger.TxIn{in}, genesisCoin, nil, w.addr(1), nil, []ed25519.PrivateKey{w.keys[1]})
		if err != nil {
			t.Fatal(err)
		}
		conflicting = append(conflicting, tx)
	}
	for _, tc := range []struct {
		name   string
		rounds [][]*ledger.Tx // each round is announced, fetched and served
		window time.Duration  // 0: the default
		pause  time.Duration  // between rounds
		want   error
	}{
		{"at the threshold", [][]*ledger.Tx{forged[:10]}, 0, 0, nil},
		{"past the threshold", [][]*ledger.Tx{forged[:11]}, 0, 0, txsubmission.ErrTooManyInvalidTxs},
		{"past it over rounds", [][]*ledger.Tx{forged[:6], forged[6:12]}, 0, 0, txsubmission.ErrTooManyInvalidTxs},
		{"old ones leave the window", [][]*ledger.Tx{forged[:10], forged[10:20]}, 100 * time.Millisecond, 250 * time.Millisecond, nil},
		{"state-dependent failures", [][]*ledger.Tx{conflicting}, 0, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := newMempool(w.genesis())
			l, hc, done := startServer(t, mp, txsubmission.Options{InvalidTxWindow: tc.window})
			ack := uint16(0)
			for i, round := range tc.rounds {
				if i > 0 {
					time.Sleep(tc.pause)
				}
				wantRequest(t, hc.requestTxIds(), true, ack, txsubmission.MaxUnackedLimit)
				hc.announce(announced(round...)...)
				hc.requestTxs()
				hc.serve(raws(round...)...)
				ack = uint16(len(round))
			}
			if tc.want == nil {
				wantRequest(t, hc.requestTxIds(), true, ack, txsubmission.MaxUnackedLimit)
				noViolation(t, l)
				return
			}
			if err := <-done; !errors.Is(err, tc.want) || !errors.Is(err, ledger.ErrMissingWitness) {
				t.Fatalf("server ended with %v, want %v for a missing witness", err, tc.want)
			}
			if err := <-l.serverViolation; !errors.Is(err, tc.want) {
				t.Fatalf("reported %v", err)
			}
		})
	}
}

// TestServerWaitsForAdmission: while the node's edge is closed to peers'
// txs (Options.Admit waits), the server asks for no txs — the client keeps
// them — and fetches them once it opens.
func TestServerWaitsForAdmission(t *testing.T) {
	w := newWallet(1)
	mp := newMempool(w.genesis())
	txs := w.txs(t, 0, 2)
	asked, open := make(chan struct{}, 1), make(chan struct{})
	l, hc, _ := startServer(t, mp, txsubmission.Options{Admit: func(ctx context.Context) error {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-open:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	wantRequest(t, hc.requestTxIds(), true, 0, txsubmission.MaxUnackedLimit)
	hc.announce(announced(txs...)...)
	<-asked // the server is waiting to be let in, before any request
	received := make(chan []block.Hash)
	go func() { received <- hc.requestTxs() }()
	select {
	case ids := <-received:
		t.Fatalf("the server asked for %d txs while the edge was closed", len(ids))
	default:
	}
	close(open)
	if got := <-received; !slices.Equal(got, hashes(txs)) {
		t.Fatalf("server asked for %v, want %v", got, hashes(txs))
	}
	hc.serve(raws(txs...)...)
	wantRequest(t, hc.requestTxIds(), true, 2, txsubmission.MaxUnackedLimit)
	if !mp.holdsAll(txs) {
		t.Fatal("the txs were not added once the edge opened")
	}
	noViolation(t, l)
}

// TestServerAddsAReplyInOneCall: the txs of one reply reach the mempool in
// one AddTxs, and each is judged as if added alone: an invalid tx among
// valid ones is refused alone, for the reason the mempool gives it, and
// counted against the client once.
func TestServerAddsAReplyInOneCall(t *testing.T) {
	w := newWallet(3)
	valid := append(w.txs(t, 0, 1), w.txs(t, 1, 1)...)
	forged := w.forged(t, 2, 1)[0]
	reply := []*ledger.Tx{valid[0], forged, valid[1]}
	alone := newMempool(w.genesis()).Add(context.Background(), forged.Bytes())
	if !errors.Is(alone, ledger.ErrMissingWitness) {
		t.Fatalf("forged tx added alone: %v", alone)
	}

	mp := newMempool(w.genesis())
	var (
		mu     sync.Mutex
		judged []error // the errors the server asked IsInvalid about
	)
	l, hc, _ := startServer(t, mp, txsubmission.Options{IsInvalid: func(err error) bool {
		mu.Lock()
		defer mu.Unlock()
		judged = append(judged, err)
		return txsubmission.IsInvalidTx(err)
	}})
	wantRequest(t, hc.requestTxIds(), true, 0, txsubmission.MaxUnackedLimit)
	hc.announce(announced(reply...)...)
	if got := hc.requestTxs(); !slices.Equal(got, hashes(reply)) {
		t.Fatalf("server asked for %v, want %v", got, hashes(reply))
	}
	hc.serve(raws(reply...)...)
	wantRequest(t, hc.requestTxIds(), true, 3, txsubmission.MaxUnackedLimit)

	if got := mp.addTxsCalls(); !slices.Equal(got, []int{3}) {
		t.Fatalf("AddTxs batches %v, want one of the reply's 3 txs", got)
	}
	if !mp.holdsAll(valid) || mp.Has(forged.Hash()) || !mp.RecentlyRejected(forged.Hash()) {
		t.Fatal("want the valid txs held and the forged one rejected")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(judged) != 1 || judged[0].Error() != alone.Error() {
		t.Fatalf("errors judged %v, want the forged tx's alone: %v", judged, alone)
	}
	noViolation(t, l)
}
