package txsubmission_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

func (hs *handServer) txIds(blocking bool, ack, req uint16) []txsubmission.TxIDAndSize {
	hs.t.Helper()
	hs.send(&txsubmission.MsgRequestTxIds{Blocking: blocking, Ack: ack, Req: req})
	reply, ok := hs.recv().(*txsubmission.MsgReplyTxIds)
	if !ok {
		hs.t.Fatal("no reply tx ids")
	}
	return reply.IDs
}

// txs requests txs and returns the reply.
func (hs *handServer) txs(ids ...block.Hash) [][]byte {
	hs.t.Helper()
	hs.send(&txsubmission.MsgRequestTxs{IDs: ids})
	reply, ok := hs.recv().(*txsubmission.MsgReplyTxs)
	if !ok {
		hs.t.Fatal("no reply txs")
	}
	return reply.Txs
}

func announced(txs ...*ledger.Tx) []txsubmission.TxIDAndSize {
	out := make([]txsubmission.TxIDAndSize, len(txs))
	for i, tx := range txs {
		out[i] = txsubmission.TxIDAndSize{ID: tx.Hash(), Size: uint32(tx.Size())}
	}
	return out
}

func raws(txs ...*ledger.Tx) [][]byte {
	out := make([][]byte, len(txs))
	for i, tx := range txs {
		out[i] = tx.Bytes()
	}
	return out
}

// TestClientServesWindow walks a client through the window: ids in ticket
// order up to req, txs in request order, acknowledgements, an empty
// non-blocking reply, a tx gone from the mempool left out, and a blocking
// request answered when a tx arrives.
func TestClientServesWindow(t *testing.T) {
	w := newWallet(1)
	mp := newMempool(w.genesis())
	txs := w.txs(t, 0, 6)
	mp.mustAdd(t, txs[:5]...)
	l, hs, _ := startClient(t, mp, txsubmission.Options{MaxUnackedTxIds: 4})

	if got := hs.txIds(true, 0, 3); !slices.Equal(got, announced(txs[:3]...)) {
		t.Fatalf("first ids %v", got)
	}
	if got := hs.txs(txs[2].Hash(), txs[0].Hash()); !slices.EqualFunc(got, raws(txs[2], txs[0]), bytes.Equal) {
		t.Fatal("txs not served in request order")
	}
	// Ack 2 of 3, ask 3: the window (4) holds 1 + 3; only 2 txs remain.
	if got := hs.txIds(false, 2, 3); !slices.Equal(got, announced(txs[3:5]...)) {
		t.Fatalf("second ids %v", got)
	}
	if got := hs.txIds(false, 0, 1); len(got) != 0 {
		t.Fatalf("non-blocking request with nothing new: %v", got)
	}
	mp.remove(txs[3].Hash())
	if got := hs.txs(txs[3].Hash(), txs[4].Hash()); !slices.EqualFunc(got, raws(txs[4]), bytes.Equal) {
		t.Fatal("a removed tx was not left out")
	}
	hs.send(&txsubmission.MsgRequestTxIds{Blocking: true, Ack: 3, Req: 4})
	eventually(t, "the client waits", func() bool { return l.server.State() == txsubmission.StTxIds })
	mp.mustAdd(t, txs[5])
	if reply, ok := hs.recv().(*txsubmission.MsgReplyTxIds); !ok || !slices.Equal(reply.IDs, announced(txs[5])) {
		t.Fatalf("blocking reply %v", reply)
	}
	noViolation(t, l)
}

// TestClientChecksRequests plays servers that break the window.
func TestClientChecksRequests(t *testing.T) {
	w := newWallet(1)
	txs := w.txs(t, 0, 5)
	other := w.txs(t, 0, 1)[0] // never in the mempool
	for _, tc := range []struct {
		name string
		play func(hs *handServer) // the last request is the bad one
		want error
	}{
		{"ack before any announcement", func(hs *handServer) {
			hs.send(&txsubmission.MsgRequestTxIds{Blocking: true, Ack: 1, Req: 1})
		}, txsubmission.ErrAckTooMany},
		{"ack more than announced", func(hs *handServer) {
			hs.txIds(true, 0, 2)
			hs.send(&txsubmission.MsgRequestTxIds{Blocking: false, Ack: 3, Req: 1})
		}, txsubmission.ErrAckTooMany},
		{"request beyond the window", func(hs *handServer) {
			hs.send(&txsubmission.MsgRequestTxIds{Blocking: true, Req: 5})
		}, txsubmission.ErrRequestTooMany},
		{"unacknowledged ids count", func(hs *handServer) {
			hs.txIds(true, 0, 3)
			hs.send(&txsubmission.MsgRequestTxIds{Blocking: false, Ack: 0, Req: 2})
		}, txsubmission.ErrRequestTooMany},
		{"blocking with ids unacknowledged", func(hs *handServer) {
			hs.txIds(true, 0, 3)
			hs.send(&txsubmission.MsgRequestTxIds{Blocking: true, Ack: 2, Req: 1})
		}, txsubmission.ErrBlockingWithUnacked},
		{"blocking request for nothing", func(hs *handServer) {
			hs.send(&txsubmission.MsgRequestTxIds{Blocking: true})
		}, txsubmission.ErrRequestedNothing},
		{"non-blocking request for nothing", func(hs *handServer) {
			hs.txIds(true, 0, 1)
			hs.send(&txsubmission.MsgRequestTxIds{Blocking: false})
		}, txsubmission.ErrRequestedNothing},
		{"tx not announced", func(hs *handServer) {
			hs.txIds(true, 0, 2)
			hs.send(&txsubmission.MsgRequestTxs{IDs: []block.Hash{txs[2].Hash()}})
		}, txsubmission.ErrNotAnnounced},
		{"tx never held", func(hs *handServer) {
			hs.txIds(true, 0, 2)
			hs.send(&txsubmission.MsgRequestTxs{IDs: []block.Hash{other.Hash()}})
		}, txsubmission.ErrNotAnnounced},
		{"tx asked for twice", func(hs *handServer) {
			hs.txIds(true, 0, 2)
			hs.txs(txs[0].Hash())
			hs.send(&txsubmission.MsgRequestTxs{IDs: []block.Hash{txs[0].Hash()}})
		}, txsubmission.ErrNotAnnounced},
		{"tx acknowledged before", func(hs *handServer) {
			hs.txIds(true, 0, 2)
			hs.txIds(false, 1, 1)
			hs.send(&txsubmission.MsgRequestTxs{IDs: []block.Hash{txs[0].Hash()}})
		}, txsubmission.ErrNotAnnounced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := newMempool(w.genesis())
			mp.mustAdd(t, txs...)
			l, hs, done := startClient(t, mp, txsubmission.Options{MaxUnackedTxIds: 4})
			tc.play(hs)
			if err := <-done; !errors.Is(err, tc.want) {
				t.Fatalf("client ended with %v, want %v", err, tc.want)
			}
			if err := <-l.clientViolation; !errors.Is(err, tc.want) {
				t.Fatalf("reported %v, want %v", err, tc.want)
			}
		})
	}
}

// TestClientBatchesBlockingReplies: a client holding a blocking request
// that gets one tx waits, up to BatchWait, for more before it answers —
// and answers at once when the request is full.
func TestClientBatchesBlockingReplies(t *testing.T) {
	w := newWallet(1)
	mp := newMempool(w.genesis())
	txs := w.txs(t, 0, 3)
	l, hs, _ := startClient(t, mp, txsubmission.Options{BatchWait: time.Hour})
	hs.send(&txsubmission.MsgRequestTxIds{Blocking: true, Ack: 0, Req: 3})
	eventually(t, "the client waits", func() bool { return l.server.State() == txsubmission.StTxIds })
	replies := make(chan []txsubmission.TxIDAndSize, 1)
	go func() {
		if reply, ok := hs.recv().(*txsubmission.MsgReplyTxIds); ok {
			replies <- reply.IDs
		}
		close(replies)
	}()
	for i, tx := range txs {
		mp.mustAdd(t, tx)
		if i < len(txs)-1 && len(replies) > 0 {
			t.Fatalf("answered with %d of %d txs before the request was full", i+1, len(txs))
		}
	}
	if got := <-replies; !slices.Equal(got, announced(txs...)) {
		t.Fatalf("reply %v, want the three txs at once", got)
	}
	noViolation(t, l)
}

// TestClientKeepsWhatItFound: a block taking the txs a blocking request's
// walk found, before the batch wait ends, must not leave the request
// answered with no ids (a protocol violation the server would close the
// session for); the txs found are announced, and asked for, they are left
// out of the reply as the protocol allows.
func TestClientKeepsWhatItFound(t *testing.T) {
	w := newWallet(1)
	mp := newMempool(w.genesis())
	tx := w.txs(t, 0, 1)[0]
	mp.afterWalk = func(found []txsubmission.MempoolTx) {
		for _, f := range found {
			mp.remove(f.Hash)
		}
	}
	l, hs, _ := startClient(t, mp, txsubmission.Options{BatchWait: time.Nanosecond})
	hs.send(&txsubmission.MsgRequestTxIds{Blocking: true, Ack: 0, Req: 3})
	eventually(t, "the client waits", func() bool { return l.server.State() == txsubmission.StTxIds })
	mp.mustAdd(t, tx)
	reply, ok := hs.recv().(*txsubmission.MsgReplyTxIds)
	if !ok || !slices.Equal(reply.IDs, announced(tx)) {
		t.Fatalf("reply %+v, want the tx the walk found", reply)
	}
	if got := hs.txs(tx.Hash()); len(got) != 0 {
		t.Fatalf("served %d txs the mempool no longer holds", len(got))
	}
	noViolation(t, l)
}
