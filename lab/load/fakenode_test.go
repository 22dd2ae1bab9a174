package load

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
)

// fakeAPINode serves a node's local API (the submit, utxo, mempool, blocks
// and status routes) over a real ledger: a chain (its blocks and the UTxO
// at its tip) and a mempool of txs validated on top. Tests move txs to the
// chain with adopt, lose the mempool with restart, and script answers with
// the knobs.
type fakeAPINode struct {
	params ledger.Params
	server *httptest.Server

	// mu guards everything below; handlers and tests take it.
	mu         sync.Mutex
	chain      ledger.MapUTxO // the UTxO at the tip
	blocks     []apitypes.BlockTxs
	txsOnChain uint64
	mempool    []*ledger.Tx   // in admission order
	view       ledger.MapUTxO // chain after the mempool's txs
	// Knobs: refuse the next refuse submits with 503 (queue delay,
	// Retry-After 2: a batch whole), answer the next rejectN txs with 400
	// reject and the next full txs with 503 mempool full (the rest of
	// their batch untried), those two once after more txs were tried,
	// admit the next unanswered submits without answering (the connection
	// is closed), lose the next lose unread (the connection is closed: a
	// POST lost on its way); failQueries answers every GET with 500.
	refuse      int
	rejectN     int
	reject      error
	full        int
	after       int
	unanswered  int
	lose        int
	failQueries bool
	posts       int // submits received
}

func newFakeAPINode(t *testing.T, params ledger.Params, genesis ledger.MapUTxO) *fakeAPINode {
	n := &fakeAPINode{params: params, chain: maps.Clone(genesis), view: maps.Clone(genesis)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/submit/tx", n.handleSubmit)
	mux.HandleFunc("POST /api/submit/txs", n.handleSubmitBatch)
	mux.HandleFunc("GET /api/utxo/{txid}/{index}", n.handleUTxO)
	mux.HandleFunc("GET /api/mempool/{txid}", n.handleMempool)
	mux.HandleFunc("GET /api/blocks", n.handleBlocks)
	mux.HandleFunc("GET /status", n.handleStatus)
	mux.HandleFunc("GET /api/parameters", func(w http.ResponseWriter, _ *http.Request) { writeAPIJSON(w, http.StatusOK, n.params) })
	mux.HandleFunc("GET /api/addresses/{address}/utxos", n.handleAddressUTxOs)
	n.server = httptest.NewServer(mux)
	t.Cleanup(n.server.Close)
	return n
}

// node is the fake as the firehose addresses a node.
func (n *fakeAPINode) node(name string) Node { return Node{Name: name, URL: n.server.URL} }

func (n *fakeAPINode) handleSubmit(w http.ResponseWriter, r *http.Request) {
	raw, ok := n.received(w, r)
	if !ok {
		return
	}
	defer n.mu.Unlock()
	a := n.addTx(raw)
	if a.Status == http.StatusAccepted && n.answerless(w) {
		return
	}
	switch a.Status {
	case http.StatusAccepted:
		writeAPIJSON(w, a.Status, a.ID)
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(a.RetryAfter))
		writeAPIError(w, a.Status, a.Error)
	default:
		writeAPIJSON(w, a.Status, map[string]string{"error": a.Error, "rule": a.Rule})
	}
}

// handleSubmitBatch adds a batch's txs in order, as the node does: a tx
// refused for room ends the batch, its rest answered so untried.
func (n *fakeAPINode) handleSubmitBatch(w http.ResponseWriter, r *http.Request) {
	raw, ok := n.received(w, r)
	if !ok {
		return
	}
	defer n.mu.Unlock()
	var items []cbor.RawMessage
	if err := cbor.Unmarshal(raw, &items); err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	answers := make([]apitypes.TxAnswer, len(items))
	refused := -1
	for i, item := range items {
		if refused >= 0 {
			answers[i] = answers[refused]
			answers[i].Error = "not tried: " + answers[i].Error
			continue
		}
		if answers[i] = n.addTx(item); answers[i].Status == http.StatusServiceUnavailable {
			refused = i
		}
	}
	if n.answerless(w) {
		return
	}
	writeAPIJSON(w, http.StatusOK, answers)
}

// received reads a submit's body and, unless the knobs lose the POST or
// refuse it whole (answered here), returns it with n.mu held.
func (n *fakeAPINode) received(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Header.Get("Content-Type") != "application/cbor" {
		writeAPIError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/cbor")
		return nil, false
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	n.mu.Lock()
	n.posts++
	switch {
	case n.lose > 0:
		n.lose--
		n.mu.Unlock()
		closeUnanswered(w)
		return nil, false
	case n.refuse > 0:
		n.refuse--
		n.mu.Unlock()
		w.Header().Set("Retry-After", "2")
		writeAPIError(w, http.StatusServiceUnavailable, "refused (queue-delay): the oldest tx held has waited 12.0 s (more than 10.0 s); try again later")
		return nil, false
	}
	return raw, true
}

// answerless closes the connection without an answer if the knob says so.
func (n *fakeAPINode) answerless(w http.ResponseWriter) bool {
	if n.unanswered == 0 {
		return false
	}
	n.unanswered--
	closeUnanswered(w)
	return true
}

func closeUnanswered(w http.ResponseWriter) {
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
}

// addTx is what the node answers a tx: the knobs', or its ledger's on the
// mempool's view. n.mu is held.
func (n *fakeAPINode) addTx(raw []byte) apitypes.TxAnswer {
	knobs := n.after == 0
	if !knobs {
		n.after--
	}
	switch {
	case !knobs:
	case n.full > 0:
		n.full--
		return apitypes.TxAnswer{Status: http.StatusServiceUnavailable, Reason: apitypes.ReasonMempoolFull, RetryAfter: 1, Error: "mempool full"}
	case n.rejectN > 0:
		n.rejectN--
		return rejectionOf(n.reject)
	}
	tx, err := ledger.DecodeTx(raw)
	if err != nil {
		return rejectionOf(err)
	}
	if slices.ContainsFunc(n.mempool, func(m *ledger.Tx) bool { return m.Hash() == tx.Hash() }) {
		return apitypes.TxAnswer{Status: http.StatusBadRequest, Error: "mempool: tx already in the mempool", Rule: apitypes.RuleInMempool}
	}
	diff, err := ledger.Apply(n.params, n.view, 0, tx)
	if err != nil {
		return rejectionOf(err)
	}
	applyDiff(n.view, diff)
	n.mempool = append(n.mempool, tx)
	id := tx.ID()
	return apitypes.TxAnswer{Status: http.StatusAccepted, ID: hex.EncodeToString(id[:])}
}

// rejectionOf is the node's 400 for a tx that broke a ledger rule: its
// message and the rule's code.
func rejectionOf(err error) apitypes.TxAnswer {
	rule, _ := ledger.RuleOf(err)
	return apitypes.TxAnswer{Status: http.StatusBadRequest, Error: err.Error(), Rule: rule.Code()}
}

func (n *fakeAPINode) handleUTxO(w http.ResponseWriter, r *http.Request) {
	id, err := block.ParseHash(r.PathValue("txid"))
	index, errIndex := strconv.ParseUint(r.PathValue("index"), 10, 32)
	if err != nil || errIndex != nil {
		writeAPIError(w, http.StatusBadRequest, "bad txin")
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failQueries {
		writeAPIError(w, http.StatusInternalServerError, "ledger unavailable")
		return
	}
	out, ok := n.chain[ledger.TxIn{TxID: id, Index: uint32(index)}]
	if !ok {
		writeAPIError(w, http.StatusNotFound, "not unspent at the selected tip")
		return
	}
	writeAPIJSON(w, http.StatusOK, map[string]any{"address": ledger.FormatAddress(out.Address), "coin": out.Coin})
}

// handleAddressUTxOs lists the address's outputs at the tip, on one page.
func (n *fakeAPINode) handleAddressUTxOs(w http.ResponseWriter, r *http.Request) {
	address, err := ledger.ParseAddress(r.PathValue("address"))
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	outputs := []apitypes.AddressUTxO{}
	for in, out := range n.chain {
		if string(out.Address) == string(address) {
			outputs = append(outputs, apitypes.AddressUTxO{Address: ledger.FormatAddress(address), TxHash: hex.EncodeToString(in.TxID[:]), OutputIndex: in.Index,
				Amount: []apitypes.Amount{{Unit: "lovelace", Quantity: strconv.FormatUint(out.Coin, 10)}}})
		}
	}
	writeAPIJSON(w, http.StatusOK, outputs)
}

func (n *fakeAPINode) handleMempool(w http.ResponseWriter, r *http.Request) {
	id, err := block.ParseHash(r.PathValue("txid"))
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failQueries {
		writeAPIError(w, http.StatusInternalServerError, "mempool unavailable")
		return
	}
	i := slices.IndexFunc(n.mempool, func(tx *ledger.Tx) bool { return tx.ID() == id })
	if i < 0 {
		writeAPIError(w, http.StatusNotFound, "not in the mempool")
		return
	}
	writeAPIJSON(w, http.StatusOK, map[string]any{"ticket": i})
}

func (n *fakeAPINode) handleBlocks(w http.ResponseWriter, r *http.Request) {
	from, err := strconv.Atoi(r.URL.Query().Get("from"))
	count, errCount := strconv.Atoi(r.URL.Query().Get("count"))
	if err != nil || errCount != nil || from < 1 || count < 0 {
		writeAPIError(w, http.StatusBadRequest, "bad from or count")
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failQueries {
		writeAPIError(w, http.StatusInternalServerError, "chain unavailable")
		return
	}
	writeAPIJSON(w, http.StatusOK, blocksPage(n.blocks, from, count))
}

// blocksPage is what GET /api/blocks?from&count answers over chain: at most
// count blocks from number from on.
func blocksPage(chain []apitypes.BlockTxs, from, count int) []apitypes.BlockTxs {
	from = min(from, len(chain)+1)
	return chain[from-1 : min(from-1+count, len(chain))]
}

func (n *fakeAPINode) handleStatus(w http.ResponseWriter, _ *http.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	writeAPIJSON(w, http.StatusOK, apitypes.Status{Mempool: apitypes.MempoolStatus{Txs: len(n.mempool)}, TxsOnChain: n.txsOnChain})
}

// adopt puts txs on the node's chain in a block of its own txs, and
// revalidates the mempool on the new tip: the block's txs leave it, and so
// does anything that no longer applies.
func (n *fakeAPINode) adopt(txs []*ledger.Tx) error { return n.adoptBlock(nil, txs) }

// adoptBlock puts a block on the node's chain that applies closure, as
// the certified EB of a CertRB, then txs, as its own. Block k is in slot
// 10·k, and its hash is that of its parent and its txs, so that nodes
// adopting the same blocks hold the same chain.
func (n *fakeAPINode) adoptBlock(closure, txs []*ledger.Tx) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	number := uint64(len(n.blocks) + 1)
	b := apitypes.BlockTxs{Number: number, Slot: 10 * number, Txs: []string{}}
	id := []byte{}
	if number > 1 {
		id = append(id, n.blocks[number-2].Hash...)
	}
	for i, tx := range append(slices.Clone(closure), txs...) {
		diff, err := ledger.Reapply(n.params, n.chain, 0, tx)
		if err != nil {
			return fmt.Errorf("adopting %x: %w", tx.Hash(), err)
		}
		applyDiff(n.chain, diff)
		n.txsOnChain++
		hash := block.Hash(tx.Hash()).String()
		if i < len(closure) {
			b.Closure = append(b.Closure, hash)
		} else {
			b.Txs = append(b.Txs, hash)
		}
		id = append(id, hash...)
	}
	if closure != nil {
		b.Certifies = &apitypes.EBRef{Slot: b.Slot - 10, EbHash: strings.Repeat("eb", 32)}
	}
	b.Hash = block.HashBytes(id).String()
	n.blocks = append(n.blocks, b)
	n.revalidate()
	return nil
}

// restart loses the mempool, as a node restarted with an empty one.
func (n *fakeAPINode) restart() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mempool = nil
	n.revalidate()
}

func (n *fakeAPINode) revalidate() {
	n.view = maps.Clone(n.chain)
	kept := n.mempool[:0]
	for _, tx := range n.mempool {
		if diff, err := ledger.Reapply(n.params, n.view, 0, tx); err == nil {
			applyDiff(n.view, diff)
			kept = append(kept, tx)
		}
	}
	n.mempool = kept
}

// mempoolTxs is a copy of the mempool.
func (n *fakeAPINode) mempoolTxs() []*ledger.Tx {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.mempool)
}

// set changes knobs under the lock.
// postCount is the number of submits received.
func (n *fakeAPINode) postCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.posts
}

func (n *fakeAPINode) set(change func(n *fakeAPINode)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	change(n)
}

// forgeAll makes one block of every node's mempool and has every node
// adopt it.
func forgeAll(nodes ...*fakeAPINode) error {
	var blockTxs []*ledger.Tx
	for _, n := range nodes {
		blockTxs = append(blockTxs, n.mempoolTxs()...)
	}
	for _, n := range nodes {
		if err := n.adopt(blockTxs); err != nil {
			return errors.Join(fmt.Errorf("%s", n.server.URL), err)
		}
	}
	return nil
}

// applyDiff writes a diff into a UTxO held in a map.
func applyDiff(utxo ledger.MapUTxO, d *ledger.Diff) {
	maps.DeleteFunc(utxo, func(in ledger.TxIn, _ ledger.TxOut) bool { _, spent := d.Deletes[in]; return spent })
	maps.Copy(utxo, d.Inserts)
}

func writeAPIJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeAPIError(w http.ResponseWriter, status int, message string) {
	writeAPIJSON(w, status, map[string]string{"error": message})
}

// testFunds are count funded addresses, their keys and the genesis UTxO
// that funds each with coin.
type testFunds struct {
	keys      []ed25519.PrivateKey
	addresses [][]byte
	genesis   ledger.MapUTxO
	coin      uint64
}

func newTestFunds(t testing.TB, count int, coin uint64) testFunds {
	f := testFunds{coin: coin}
	initial := map[string]uint64{}
	for range count {
		key, err := keys.GenerateSigningKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		addr, err := keys.EnterpriseAddress(key.Public().(ed25519.PublicKey), 0)
		if err != nil {
			t.Fatal(err)
		}
		f.keys, f.addresses = append(f.keys, key), append(f.addresses, addr)
		initial[hex.EncodeToString(addr)] = coin
	}
	var err error
	if f.genesis, err = ledger.GenesisUTxO(initial); err != nil {
		t.Fatal(err)
	}
	return f
}

// chains are fresh chains of the funds, chain j pinned to node j mod nodes.
func (f testFunds) chains(nodes int) []*txChain {
	var chains []*txChain
	for j, key := range f.keys {
		chains = append(chains, newTxChain(fmt.Sprintf("payment-%d", j), j%nodes, key, f.addresses[j], ledger.GenesisTxIn(f.addresses[j]), f.coin))
	}
	return chains
}

// fakeDevnet is a firehose over fake nodes sharing one genesis.
func fakeDevnet(t *testing.T, nodes, funded int, opts Options) (*Firehose, []*fakeAPINode) {
	params := ledger.DefaultParams()
	funds := newTestFunds(t, funded, 1_000_000_000)
	var fakes []*fakeAPINode
	var devnetNodes []Node
	for i := range nodes {
		n := newFakeAPINode(t, params, funds.genesis)
		fakes = append(fakes, n)
		devnetNodes = append(devnetNodes, n.node(fmt.Sprintf("node-%d", i)))
	}
	return newFirehose(params, devnetNodes, funds.chains(nodes), &http.Client{}, opts), fakes
}
