package load

import (
	"context"
	"encoding/hex"
	"github.com/leiosnode/leiosnode/api/apiclient"
	"net/http"
	"strings"
	"testing"
)

// TestSubmitToFakeNode: a tx the node's ledger accepts gets its id back,
// and the same tx again is refused with the node's reason.
func TestSubmitToFakeNode(t *testing.T) {
	f, fakes := fakeDevnet(t, 1, 1, Options{Rate: 1})
	tx, err := f.chains[0].next(f.params)
	if err != nil {
		t.Fatal(err)
	}
	id, err := apiclient.SubmitTx(context.Background(), &http.Client{}, fakes[0].server.URL, tx.Bytes())
	if want := tx.ID(); err != nil || id != hex.EncodeToString(want[:]) {
		t.Fatalf("first submit: %q, %v", id, err)
	}
	if _, err := apiclient.SubmitTx(context.Background(), &http.Client{}, fakes[0].server.URL, tx.Bytes()); err == nil || !strings.Contains(err.Error(), "already in the mempool") {
		t.Errorf("second submit: %v, want the node's reason", err)
	}
}
