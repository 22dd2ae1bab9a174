package node

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// A tx-submission reply added together gives each tx the error Add gives
// it, tx by tx (a valid tx, its child, a bad signature, bytes that do not
// decode, a duplicate), and admits the same txs.
func TestTxSubmissionAddTxsIsAddOneByOne(t *testing.T) {
	parent, child, badSig, newPool := paymentChain(t, 0x5a)
	raws := [][]byte{parent.Bytes(), badSig, {0x80}, child.Bytes(), parent.Bytes()}

	together, oneByOne := txSubmissionMempool{newPool()}, txSubmissionMempool{newPool()}
	ctx := context.Background()
	errs := together.AddTxs(ctx, raws)
	for i, raw := range raws {
		want := oneByOne.Add(ctx, raw)
		if (errs[i] == nil) != (want == nil) || errs[i] != nil && errs[i].Error() != want.Error() {
			t.Fatalf("tx %d: AddTxs %v, Add %v", i, errs[i], want)
		}
	}
	if !errors.Is(errs[1], ledger.ErrBadWitness) || errs[0] != nil || errs[3] != nil {
		t.Fatalf("errors %v: want the parent and the child admitted, the bad signature refused", errs)
	}
	if a, b := together.pool.Snapshot().Len(), oneByOne.pool.Snapshot().Len(); a != 2 || b != 2 {
		t.Fatalf("%d and %d txs held, want 2", a, b)
	}
}

// paymentChain is a payment from a genesis fund of the key seeded by seed,
// its child, the child with a broken signature, and new mempools over
// that fund.
func paymentChain(t *testing.T, seed byte) (parent, child *ledger.Tx, badSig []byte, newPool func() *mempool.Mempool) {
	t.Helper()
	p := ledger.DefaultParams()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	addr := ledger.EnterpriseAddress(p.NetworkID, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
	in := ledger.GenesisTxIn(addr)
	utxo := ledger.MapUTxO{in: {Address: addr, Coin: 1_000_000_000}}
	parent, err := ledger.BuildPayment(p, []ledger.TxIn{in}, 1_000_000_000, nil, addr, nil, []ed25519.PrivateKey{key})
	if err != nil {
		t.Fatal(err)
	}
	child, err = ledger.BuildPayment(p, []ledger.TxIn{{TxID: parent.ID()}}, parent.Outputs[0].Coin, nil, addr, nil, []ed25519.PrivateKey{key})
	if err != nil {
		t.Fatal(err)
	}
	badSig = bytes.Clone(child.Bytes())
	badSig[bytes.Index(badSig, child.Witnesses[0].Signature[:])+9] ^= 1
	newPool = func() *mempool.Mempool {
		m, err := mempool.New(mempool.Options{Params: p, TipLedger: func() (ledger.UTxO, block.Tip, func(), error) {
			return utxo, block.Tip{}, func() {}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		return m
	}
	return parent, child, badSig, newPool
}

// countingAdds counts the batches tx submission hands the mempool.
type countingAdds struct {
	txsubmission.Mempool
	mu      sync.Mutex
	batches []int // guarded by mu: each AddTxs call's number of txs
}

func (c *countingAdds) AddTxs(ctx context.Context, raws [][]byte) []error {
	c.mu.Lock()
	c.batches = append(c.batches, len(raws))
	c.mu.Unlock()
	return c.Mempool.AddTxs(ctx, raws)
}

// A peer's reply of txs reaches the node's mempool through the
// tx-submission server in one batch; a bad signature among valid txs is
// refused alone, for the reason a single add gives it, and is the one tx
// counted against the peer.
func TestTxSubmissionServerAddsAReplyTogether(t *testing.T) {
	parent, child, badSig, newPool := paymentChain(t, 0x5b)
	reply := [][]byte{parent.Bytes(), badSig, child.Bytes()}
	ctx := context.Background()
	single := txSubmissionMempool{newPool()}
	if err := single.Add(ctx, parent.Bytes()); err != nil {
		t.Fatal(err)
	}
	alone := single.Add(ctx, badSig)
	if !errors.Is(alone, ledger.ErrBadWitness) {
		t.Fatalf("bad signature added alone: %v", alone)
	}

	pool := newPool()
	adds := &countingAdds{Mempool: TxSubmissionMempool(pool)}
	var (
		mu     sync.Mutex
		judged []error // the errors the server asked IsInvalid about
	)
	server := txsubmission.NewServer(adds, txsubmission.Options{IsInvalid: func(err error) bool {
		mu.Lock()
		defer mu.Unlock()
		judged = append(judged, err)
		return txsubmission.IsInvalidTx(err)
	}})
	client, serverSession, _, serverViolation := protocoltest.Sessions(t, ctx, txsubmission.Spec())
	served := make(chan error, 1)
	go func() { served <- server.Serve(serverSession.Context(), serverSession) }()
	t.Cleanup(func() { serverSession.Close(); <-served })

	recv := func() any {
		t.Helper()
		msg, err := client.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	send := func(msg protocol.Message) {
		t.Helper()
		if err := client.Send(msg); err != nil {
			t.Fatal(err)
		}
	}
	send(&txsubmission.MsgInit{})
	recv() // the blocking request for ids
	ids := make([]txsubmission.TxIDAndSize, len(reply))
	for i, raw := range reply {
		ids[i] = txsubmission.TxIDAndSize{ID: block.HashBytes(raw), Size: uint32(len(raw))}
	}
	send(&txsubmission.MsgReplyTxIds{IDs: ids})
	if req, ok := recv().(*txsubmission.MsgRequestTxs); !ok || len(req.IDs) != len(reply) {
		t.Fatalf("server asked for %+v, want the %d txs", req, len(reply))
	}
	send(&txsubmission.MsgReplyTxs{Txs: reply})
	// The next request comes once the reply's txs are added.
	if req, ok := recv().(*txsubmission.MsgRequestTxIds); !ok || req.Ack != uint16(len(reply)) {
		t.Fatalf("server's next request %+v, want ids acknowledging the reply", req)
	}

	adds.mu.Lock()
	batches := slices.Clone(adds.batches)
	adds.mu.Unlock()
	if !slices.Equal(batches, []int{len(reply)}) {
		t.Fatalf("AddTxs batches %v, want one of the reply's %d txs", batches, len(reply))
	}
	if s := pool.Snapshot(); !s.Has(parent.Hash()) || !s.Has(child.Hash()) || s.Len() != 2 {
		t.Fatalf("mempool holds %d txs, want the parent and the child", s.Len())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(judged) != 1 || judged[0].Error() != alone.Error() {
		t.Fatalf("errors judged %v, want the bad signature's alone: %v", judged, alone)
	}
	select {
	case err := <-serverViolation:
		t.Fatalf("server reported %v", err)
	default:
	}
}
