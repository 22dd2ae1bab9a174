package load

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestWalkChain reads a chain longer than a batch from a fake node: every
// block once, in order, each tx placed in its block, a certified closure's
// txs as via an EB.
func TestWalkChain(t *testing.T) {
	f, fakes := fakeDevnet(t, 1, 2, Options{Rate: 1})
	n := fakes[0]
	for range 2*walkBatch + 17 {
		if err := n.adopt(nil); err != nil {
			t.Fatal(err)
		}
	}
	stepOnce(f, f.chains[0])
	stepOnce(f, f.chains[1])
	eb, own := n.mempoolTxs()[:1], n.mempoolTxs()[1:]
	if err := n.adoptBlock(eb, own); err != nil {
		t.Fatal(err)
	}

	c, err := walkChain(context.Background(), f.apis[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Blocks) != 2*walkBatch+18 {
		t.Fatalf("%d blocks, want %d", len(c.Blocks), 2*walkBatch+18)
	}
	for i, b := range c.Blocks {
		if b.Number != uint64(i+1) || b.Hash != n.blocks[i].Hash {
			t.Fatalf("block %d is #%d %s, want #%d %s", i, b.Number, b.Hash, i+1, n.blocks[i].Hash)
		}
	}
	last := len(c.Blocks) - 1
	if p, ok := c.txs[eb[0].Hash()]; !ok || p != (txPlace{block: last, viaEB: true}) {
		t.Errorf("the certified tx is at %+v (%v), want the last block, via its EB", p, ok)
	}
	if p, ok := c.txs[own[0].Hash()]; !ok || p != (txPlace{block: last}) {
		t.Errorf("the CertRB's own tx is at %+v (%v), want the last block", p, ok)
	}
	if len(c.txs) != 2 {
		t.Errorf("%d txs placed, want 2", len(c.txs))
	}
}

// scriptedChains serves GET /api/blocks from chains[i] at the i-th request
// (the last one from then on), as a node that switches forks between
// requests.
func scriptedChains(t testing.TB, chains ...[]apitypes.BlockTxs) apiclient.Client {
	return scriptedPages(t, 0, chains...)
}

// scriptedPages is scriptedChains whose answers, as a node's, end before
// the block that would take them past pageTxs tx hashes (a first block
// alone may); 0: no bound.
func scriptedPages(t testing.TB, pageTxs int, chains ...[]apitypes.BlockTxs) apiclient.Client {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chain := chains[min(int(requests.Add(1)), len(chains))-1]
		from, _ := strconv.Atoi(r.URL.Query().Get("from"))
		count, _ := strconv.Atoi(r.URL.Query().Get("count"))
		page := blocksPage(chain, from, count)
		for i, txs := 0, 0; pageTxs > 0 && i < len(page); i++ {
			if txs += len(page[i].Txs) + len(page[i].Closure); i > 0 && txs > pageTxs {
				page = page[:i]
			}
		}
		writeAPIJSON(w, http.StatusOK, page)
	}))
	t.Cleanup(srv.Close)
	return apiclient.New(&http.Client{}, srv.URL)
}

// TestWalkChainOfLargeBlocks: a node whose answers hold one block each,
// two being over its bound, is walked to its tip, and a switch of forks
// behind the block read last is still found.
func TestWalkChainOfLargeBlocks(t *testing.T) {
	large := func(length, forkAt int, fork string) []apitypes.BlockTxs {
		chain := scriptedChain(length, forkAt, fork)
		for i := range chain {
			chain[i].Closure = make([]string, 60)
			for j := range chain[i].Closure {
				chain[i].Closure[j] = fmt.Sprintf("%02x%030x%032x", i, j, 0)
			}
		}
		return chain
	}
	chain := large(10, 0, "")
	c, err := walkChain(context.Background(), scriptedPages(t, 100, chain))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Blocks) != len(chain) || len(c.txs) != 60*len(chain) {
		t.Errorf("walked %d blocks, %d txs; want %d, %d", len(c.Blocks), len(c.txs), len(chain), 60*len(chain))
	}

	// The node switches to another fork, from block 1 on, just before the
	// walk asks for block 2: block 1 is asked again, and differs.
	before, after := large(10, 0, ""), large(10, 1, "b")
	scripts := [][]apitypes.BlockTxs{before, before, after}
	c, err = walkChain(context.Background(), scriptedPages(t, 100, scripts...))
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range c.Blocks {
		if b.Hash != after[i].Hash {
			t.Fatalf("block %d is %s, want the fork switched to's %s", i+1, b.Hash, after[i].Hash)
		}
	}
}

// scriptedChain is blocks 1..length, without txs; from block forkAt on
// their hashes name the fork.
func scriptedChain(length, forkAt int, fork string) []apitypes.BlockTxs {
	var blocks []apitypes.BlockTxs
	for i := 1; i <= length; i++ {
		f := ""
		if i >= forkAt {
			f = fork
		}
		blocks = append(blocks, apitypes.BlockTxs{Number: uint64(i), Slot: uint64(10 * i), Hash: fmt.Sprintf("%s-%d", f, i)})
	}
	return blocks
}

// TestWalkChainSwitchingForks: a node that switches forks between two
// batches makes the walk start over, and it returns the one chain it read
// whole; a node that keeps switching makes it give up.
func TestWalkChainSwitchingForks(t *testing.T) {
	before := scriptedChain(walkBatch+50, 0, "")
	after := scriptedChain(walkBatch+60, walkBatch-20, "b")
	c, err := walkChain(context.Background(), scriptedChains(t, before, after))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Blocks) != len(after) || c.Blocks[len(after)-1].Hash != after[len(after)-1].Hash || c.Blocks[walkBatch-1].Hash != after[walkBatch-1].Hash {
		t.Errorf("walked %d blocks, tip %s; want the %d of the fork switched to", len(c.Blocks), c.Blocks[len(c.Blocks)-1].Hash, len(after))
	}

	var flapping [][]apitypes.BlockTxs
	for i := range 2 * walkAttempts {
		flapping = append(flapping, scriptedChain(walkBatch+10, 5, strconv.Itoa(i)))
	}
	if _, err := walkChain(context.Background(), scriptedChains(t, flapping...)); !errors.Is(err, errChainSwitched) {
		t.Errorf("a node switching forks at every request: %v, want %v", err, errChainSwitched)
	}
}

// TestPlaceTx places txs from scripted chains that forked after their
// first block and the mempools' answers.
func TestPlaceTx(t *testing.T) {
	tx := func(b byte) [32]byte { return [32]byte{b} }
	hex := func(b byte) string { return fmt.Sprintf("%02x", b) + strings.Repeat("00", 31) }
	chain := func(blocks ...apitypes.BlockTxs) *WalkedChain {
		c, err := indexChain(blocks)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	common := apitypes.BlockTxs{Number: 1, Hash: "common", Txs: []string{hex('a')}}
	// x certifies an EB with c after the common block; y, the other fork,
	// carries e instead.
	x := chain(common, apitypes.BlockTxs{Number: 2, Hash: "x", Closure: []string{hex('c')}, Txs: []string{hex('d')}})
	y := chain(common, apitypes.BlockTxs{Number: 2, Hash: "y", Txs: []string{hex('e')}})
	mempools := map[[32]byte]mempoolAnswer{
		tx('e'): {held: true},                     // back in x's mempool after the fork
		tx('f'): {held: true},                     // on neither chain yet
		tx('g'): {},                               // nowhere
		tx('h'): {err: errors.New("node-1: 500")}, // nowhere that answered
	}
	tests := []struct {
		tx     byte
		chains []*WalkedChain
		want   txPlacement
	}{
		{'a', []*WalkedChain{x, y}, txOnEveryChain},
		{'c', []*WalkedChain{x, y}, txOnSomeChains},
		{'c', []*WalkedChain{x}, txOnEveryChain},
		{'e', []*WalkedChain{x, y}, txInMempool},
		{'f', []*WalkedChain{x, y}, txInMempool},
		{'g', []*WalkedChain{x, y}, txLost},
		{'h', []*WalkedChain{x, y}, txUnchecked},
		{'a', nil, txUnchecked},
	}
	for _, tt := range tests {
		if got := placeTx(tt.chains, mempools, tx(tt.tx)); got != tt.want {
			t.Errorf("tx %c on %d chains: %d, want %d", tt.tx, len(tt.chains), got, tt.want)
		}
	}
}

func TestCommonPrefix(t *testing.T) {
	chain := func(length, forkAt int, fork string) *WalkedChain {
		return &WalkedChain{Blocks: scriptedChain(length, forkAt, fork)}
	}
	tests := []struct {
		name   string
		chains []*WalkedChain
		want   int
	}{
		{"none", nil, 0},
		{"one", []*WalkedChain{chain(5, 0, "")}, 5},
		{"one ahead", []*WalkedChain{chain(5, 0, ""), chain(7, 0, "")}, 5},
		{"forked", []*WalkedChain{chain(5, 0, ""), chain(7, 4, "b"), chain(6, 0, "")}, 3},
		{"forked from the first block", []*WalkedChain{chain(5, 1, "a"), chain(5, 1, "b")}, 0},
	}
	for _, tt := range tests {
		if got := CommonPrefix(tt.chains); len(got) != tt.want {
			t.Errorf("%s: %d blocks in common, want %d", tt.name, len(got), tt.want)
		}
	}
}

// BenchmarkFinalCheckWalk walks three nodes' chains of 300 blocks of a
// thousand txs each (five minutes at a thousand tx/s) and places every tx:
// the final check's work once the mempools are empty.
func BenchmarkFinalCheckWalk(b *testing.B) {
	const blocks, txsPerBlock, nodes = 300, 1000, 3
	chain := make([]apitypes.BlockTxs, blocks)
	var hashes [][32]byte
	for i := range chain {
		chain[i] = apitypes.BlockTxs{Number: uint64(i + 1), Slot: uint64(10 * (i + 1)), Hash: fmt.Sprintf("%064x", i)}
		for range txsPerBlock {
			var h [32]byte
			binary.BigEndian.PutUint64(h[:], uint64(len(hashes)))
			hashes = append(hashes, h)
			chain[i].Txs = append(chain[i].Txs, hex.EncodeToString(h[:]))
		}
	}
	apis := make([]apiclient.Client, nodes)
	for i := range apis {
		apis[i] = scriptedChains(b, chain)
	}
	b.ResetTimer()
	for b.Loop() {
		walks := WalkChains(context.Background(), apis)
		chains := Answered(walks)
		for _, h := range hashes {
			if placeTx(chains, nil, h) != txOnEveryChain {
				b.Fatal("a tx not on every chain")
			}
		}
	}
	b.ReportMetric(float64(len(hashes)), "txs")
}
