package chaindb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/ledger"
)

// The crash test runs its writer in a child process, this test binary run
// again with crashChildEnv set (see TestMain), and SIGKILLs it mid-write.
const (
	crashChildEnv = "CHAINDB_CRASH_CHILD" // the database directory
	crashSeedEnv  = "CHAINDB_CRASH_SEED"
	crashK        = 3 // small, so the immutable tip and the flushes move often
)

func crashOptions() Options {
	return Options{K: crashK, GenesisUTxO: testGenesis(8), ApplyBlock: testApply(nil), ValidateBlock: verifyHeader}
}

// TestCrashRecovery: several rounds of a child adding blocks (extensions,
// forks within and beyond k, invalid blocks; every adoption past k flushes)
// killed at a random moment; after each, the reopened database has a linked,
// contiguously numbered chain no shorter than before the round, the
// immutable tip k behind it, a ledger at the tip (by output and by address)
// and a backing store at the immutable tip equal to a from-scratch replay
// of that chain, an address index equal to the backing store, and the
// count of the txs on it.
func TestCrashRecovery(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	var prevTip block.Tip
	for round := range 4 {
		seed := rng.Uint64()
		runChildUntilKilled(t, dir, seed, time.Duration(rng.IntN(300))*time.Millisecond)

		db, err := Open(dir, crashOptions())
		if err != nil {
			t.Fatalf("round %d (seed %d): reopen: %v", round, seed, err)
		}
		checkRecovered(t, db, crashOptions().GenesisUTxO)
		tip, imm := db.Tip(), db.ImmutableTip()
		if tip.BlockNumber < prevTip.BlockNumber {
			t.Fatalf("round %d: tip went back from %s to %s", round, prevTip, tip)
		}
		t.Logf("round %d: killed and reopened at %s, immutable %s", round, tip, imm)
		prevTip = tip
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if prevTip.BlockNumber <= crashK {
		t.Fatalf("the children only got to %s: the immutable tip never moved", prevTip)
	}
}

// checkRecovered: a reopened database has a linked, contiguously numbered
// chain, a ledger at the tip (by output and by address) and a backing
// store at the immutable tip equal to a from-scratch replay of that chain
// from genesis, an address index equal to the backing store, and the
// count of the txs on it.
func checkRecovered(t *testing.T, db *DB, genesis ledger.MapUTxO) {
	t.Helper()
	chain := checkChain(t, db)
	keys := keysOf(genesis)
	for _, b := range chain {
		for _, raw := range b.Body.Txs {
			var tx testTx
			if err := block.Unmarshal(raw, &tx); err != nil {
				t.Fatal(err)
			}
			for j := range tx.Outs {
				keys[ledger.TxIn{TxID: block.HashBytes(raw), Index: uint32(j)}] = struct{}{}
			}
		}
	}
	view, _ := db.TipLedger()
	checkLedger(t, view, replay(t, genesis, chain), keys)
	checkAddresses(t, view, replay(t, genesis, chain))
	view.Close()
	checkIndex(t, db)
	if got, want := db.TxsOnChain(), txsIn(chain); got != want {
		t.Fatalf("%d txs on chain, the chain holds %d", got, want)
	}
	imm := db.ImmutableTip()
	atImm, err := db.LedgerAt(imm.Point)
	if err != nil {
		t.Fatal(err)
	}
	immModel := replay(t, genesis, chain[:imm.BlockNumber])
	checkLedger(t, atImm, immModel, keys)
	atImm.Close()
	if n := len(backingKeys(t, db)); n != len(immModel) {
		t.Fatalf("backing store has %d outputs, the model at %s has %d", n, imm, len(immModel))
	}
}

// runChildUntilKilled starts the child writer on dir and SIGKILLs it delay
// after it reports ready.
func runChildUntilKilled(t *testing.T, dir string, seed uint64, delay time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashSeedEnv+"="+strconv.FormatUint(seed, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("child said %q", line)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(waittest.Hang):
		err = fmt.Errorf("child not ready after %v, a hang", waittest.Hang)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child (seed %d): %v\n%s", seed, err, stderr.String())
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Exited() {
		t.Fatalf("child (seed %d) ended by itself before the kill: %v\n%s", seed, err, stderr.String())
	}
}

// crashChild is the child's main: add blocks to the database in dir until
// killed. It exits with status 2 on any unexpected error.
func crashChild() {
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "crash child: "+format+"\n", args...)
		os.Exit(2)
	}
	seed, err := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	if err != nil {
		fail("seed: %v", err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	opts := crashOptions()
	db, err := Open(os.Getenv(crashChildEnv), opts)
	if err != nil {
		fail("open: %v", err)
	}

	// The model UTxO after each block we may build on, from a replay.
	utxoAfter := map[block.Hash]ledger.MapUTxO{}
	utxo := opts.GenesisUTxO
	for n := uint64(1); n <= db.Tip().BlockNumber; n++ {
		b, err := db.BlockByNumber(n)
		if err != nil {
			fail("block %d: %v", n, err)
		}
		if utxo, err = applyToMap(utxo, b); err != nil {
			fail("replay of %d: %v", n, err)
		}
		utxoAfter[b.Hash()] = utxo
	}
	utxoOf := func(h *block.Header) ledger.MapUTxO {
		if h == nil {
			return opts.GenesisUTxO
		}
		return utxoAfter[h.Hash()]
	}
	f := newForger()
	f.nonce = seed << 16 // blocks unlike the ones of earlier rounds
	fmt.Println("ready")

	for {
		// Extend the tip, or fork off a block up to k+1 back (one too deep).
		tip := db.Tip()
		var parent *block.Header
		length := 1
		if depth := uint64(rng.IntN(crashK + 2)); rng.IntN(4) == 0 && depth < tip.BlockNumber {
			b, err := db.BlockByNumber(tip.BlockNumber - depth)
			if err != nil {
				fail("fork point: %v", err)
			}
			parent, length = b.Header, int(depth)+rng.IntN(3)
		} else if tip.BlockNumber > 0 {
			b, err := db.Block(tip.Point.Hash)
			if err != nil {
				fail("tip: %v", err)
			}
			parent = b.Header
		}
		for range max(length, 1) {
			bad := rng.IntN(20) == 0
			var txs []testTx
			if bad {
				txs = []testTx{{Spend: []ledger.TxIn{{TxID: [32]byte{0xba, 0xd}}}}}
			} else {
				txs = crashTxs(rng, utxoOf(parent))
			}
			blk := f.next(parent, uint64(1+rng.IntN(2)), txs...)
			_, err := db.AddBlock(blk)
			refused := errors.Is(err, ErrForkTooDeep) || (bad && errors.Is(err, ErrInvalidBlock))
			if err != nil && !refused {
				fail("AddBlock #%d: %v", blk.Header.BlockNumber, err)
			}
			if bad || err != nil {
				break // nothing valid to build on
			}
			next, err := applyToMap(utxoOf(parent), blk)
			if err != nil {
				fail("model: %v", err)
			}
			utxoAfter[blk.Hash()] = next
			parent = blk.Header
		}
	}
}

// crashTxs draws up to two txs spending from utxo.
func crashTxs(rng *rand.Rand, utxo ledger.MapUTxO) []testTx {
	avail := make([]ledger.TxIn, 0, len(utxo))
	for in := range utxo {
		avail = append(avail, in)
	}
	slices.SortFunc(avail, func(a, b ledger.TxIn) int { ka, kb := a.Key(), b.Key(); return bytes.Compare(ka[:], kb[:]) })
	rng.Shuffle(len(avail), func(i, j int) { avail[i], avail[j] = avail[j], avail[i] })
	var txs []testTx
	for range rng.IntN(3) {
		if len(avail) == 0 {
			break
		}
		tx := testTx{Spend: avail[:1], Outs: []testOut{{Addr: []byte("c"), Coin: rng.Uint64N(1e6)}}}
		if rng.IntN(2) == 0 {
			tx.Outs = append(tx.Outs, testOut{Addr: []byte("d"), Coin: 7})
		}
		avail = avail[1:]
		txs = append(txs, tx)
	}
	return txs
}
