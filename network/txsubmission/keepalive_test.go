package txsubmission_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// TestQuietClientSaysDone: a client whose mempool has nothing new answers
// a blocking request with done after KeepAlive, well before the server's
// TxIds timeout, and both ends part without a violation.
func TestQuietClientSaysDone(t *testing.T) {
	w := newWallet(1)
	from, to := newMempool(w.genesis()), newMempool(w.genesis())
	opts := txsubmission.Options{KeepAlive: 50 * time.Millisecond}
	l := newLink(t, context.Background())
	client, server := make(chan error, 1), make(chan error, 1)
	go func() { client <- txsubmission.NewClient(from, opts).Run(l.client.Context(), l.client) }()
	go func() { server <- txsubmission.NewServer(to, opts).Serve(l.server.Context(), l.server) }()
	for name, done := range map[string]chan error{"client": client, "server": server} {
		select {
		case err := <-done:
			if name == "client" && !errors.Is(err, txsubmission.ErrQuiet) || name == "server" && err != nil {
				t.Fatalf("%s ended with %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the %s did not end", name)
		}
	}
	noViolation(t, l)
}

// fullMempool never has room: an add waits until its context ends.
type fullMempool struct{ *memMempool }

func (fullMempool) AddTxs(ctx context.Context, txs [][]byte) []error {
	<-ctx.Done()
	errs := make([]error, len(txs))
	for i := range errs {
		errs[i] = ctx.Err()
	}
	return errs
}

// TestServerGivesUpOnAFullMempool: a server whose mempool stays full waits
// MaxAddWait for room, then drops the txs and asks again, so the client
// is not left waiting for the next request.
func TestServerGivesUpOnAFullMempool(t *testing.T) {
	w := newWallet(1)
	tx := w.txs(t, 0, 1)[0]
	l := newLink(t, context.Background())
	go func() {
		_ = txsubmission.NewServer(fullMempool{newMempool(w.genesis())}, txsubmission.Options{MaxAddWait: 50 * time.Millisecond}).Serve(l.server.Context(), l.server)
	}()
	hc := &handClient{hand{t: t, s: l.client, who: "hand client"}}
	hc.send(&txsubmission.MsgInit{})
	wantRequest(t, hc.requestTxIds(), true, 0, txsubmission.MaxUnackedLimit)
	hc.announce(announced(tx)...)
	hc.requestTxs()
	hc.serve(tx.Bytes())
	wantRequest(t, hc.requestTxIds(), true, 1, txsubmission.MaxUnackedLimit)
	noViolation(t, l)
}
