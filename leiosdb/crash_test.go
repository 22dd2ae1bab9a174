package leiosdb

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/internal/waittest"
)

// crashDirEnv tells the re-executed test binary to be the crash child, and
// where its store is.
const crashDirEnv = "LEIOSDB_CRASH_CHILD_DIR"

// TestCrashConsistency runs the test binary again as a child that writes to
// a store in a loop, SIGKILLs it at a random moment, reopens the store and
// checks every count and reference from scratch. The rounds share one store,
// so each child also starts from a store recovered after a kill.
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the child is writing, then kill it mid-flight.
		ready := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if sc.Text() == "writing" {
					ready <- true
					break
				}
			}
			close(ready)
		}()
		select {
		case ok := <-ready:
			if !ok {
				_ = cmd.Wait()
				t.Fatalf("round %d: child ended before writing: %s", round, stderr.String())
			}
		case <-time.After(waittest.Hang):
			_ = cmd.Process.Kill()
			t.Fatalf("round %d: child not writing after %v, a hang", round, waittest.Hang)
		}
		time.Sleep(time.Duration(20+rng.IntN(300)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: child was not killed (%v): %s", round, err, stderr.String())
		}

		db, err := Open(dir, Options{Logger: quietLogger()})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		if err := db.CheckConsistency(); err != nil {
			t.Fatalf("round %d: after kill -9: %v", round, err)
		}
		points, err := db.Points(0)
		if err != nil || len(points) == 0 {
			t.Fatalf("round %d: %d points after recovery, %v", round, len(points), err)
		}
		t.Logf("round %d: consistent with %d points", round, len(points))
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashChild is the child of TestCrashConsistency: it inserts points,
// bodies (some sharing txs, some at two slots) and txs, promotes and collects,
// until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestCrashConsistency")
	}
	db, err := Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	// Continue after the slots of earlier rounds.
	points, err := db.Points(0)
	if err != nil {
		t.Fatal(err)
	}
	slot := uint64(1)
	if len(points) > 0 {
		slot = points[len(points)-1].Point.Slot + 1
	}
	rng := rand.New(rand.NewPCG(slot, uint64(time.Now().UnixNano())))
	var recent [][]byte                          // txs that later bodies share
	deadline := time.Now().Add(30 * time.Second) // never outlive a vanished parent for long
	for i := 0; time.Now().Before(deadline); i++ {
		txs := make([][]byte, 20+rng.IntN(200))
		for j := range txs {
			if len(recent) > 0 && rng.IntN(4) == 0 {
				txs[j] = recent[rng.IntN(len(recent))]
			} else {
				txs[j] = blocktest.Tx(rng.Uint64(), 100+rng.IntN(900))
			}
		}
		txs = dedupTxs(txs)
		recent = append(recent[max(0, len(recent)-500):], txs...)
		eb := testBody(t, txs)
		p := pointOf(slot, eb)
		must(db.InsertPoint(p, eb.Size()))
		if rng.IntN(5) == 0 {
			must(db.InsertPoint(block.Point{Slot: slot + 1, Hash: eb.Hash()}, eb.Size()))
		}
		if _, err := db.InsertBody(p, eb.Bytes()); err != nil {
			panic(err)
		}
		rng.Shuffle(len(txs), func(a, b int) { txs[a], txs[b] = txs[b], txs[a] })
		for k := 0; k < len(txs)*9/10; k += 50 { // leave some missing
			if _, err := db.InsertTxs(block.HashTxs(txs[k:min(k+50, len(txs))])); err != nil {
				panic(err)
			}
		}
		if i%7 == 0 {
			must(db.Promote(p))
		}
		if i%5 == 0 && slot > 40 {
			if _, err := db.GC(slot - 40); err != nil {
				panic(err)
			}
		}
		if i == 0 {
			fmt.Println("writing")
		}
		slot += 2
	}
}

func dedupTxs(txs [][]byte) [][]byte {
	seen := make(map[block.Hash]bool)
	out := txs[:0]
	for _, tx := range txs {
		if h := block.HashBytes(tx); !seen[h] {
			seen[h] = true
			out = append(out, tx)
		}
	}
	return out
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
