package report

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/ledger"
)

// CPUFloor is the least CPU a node could spend on a tx, measured in the
// same run on the txs the firehose built: one decode, one full apply with
// its ed25519 witness check, one reapply, on one core. A node beside it
// shows how much its other work (tx submission, diffusion, encryption,
// stores, the forge, voting) costs on top.
type CPUFloor struct {
	// Measured says what was measured, in words.
	Measured string `json:"measured"`
	Txs      int    `json:"txs"`
	// CPU seconds per 1,000 txs: decoding, the ed25519 witness check alone
	// (a part of the apply), the full apply (every rule), the reapply (no
	// witness check), and the floor: decode + apply + reapply.
	DecodeSecondsPerKTx  float64 `json:"decodeSecondsPerKTx"`
	WitnessSecondsPerKTx float64 `json:"witnessSecondsPerKTx"`
	ApplySecondsPerKTx   float64 `json:"applySecondsPerKTx"`
	ReapplySecondsPerKTx float64 `json:"reapplySecondsPerKTx"`
	FloorSecondsPerKTx   float64 `json:"floorSecondsPerKTx"`
}

// FloorDefinition is what the floor is, in the words the output uses.
const FloorDefinition = "one decode, one full apply with its ed25519 witness check, one reapply, on one core"

const floorMeasured = "the floor is " + FloorDefinition + ": %d txs the firehose built, in their chains' order, " +
	"each phase over all of them (repeated until it took %v), on one goroutine locked to one OS thread, GC as usual; " +
	"the apply on an in-memory UTxO from the genesis funds, each tx's outputs added before the next, " +
	"the reapply on a fresh copy; %s"

// floorPhaseMin is the least time each phase of the floor is repeated
// for, so that a fast phase (a reapply is microseconds) is not lost in
// the CPU clock's granularity.
const floorPhaseMin = 200 * time.Millisecond

// measureFirehoseFloor measures the floor on the firehose's sample of its
// txs (load.Firehose.FloorSample), which apply from g's genesis funds on
// a devnet.
func measureFirehoseFloor(g *consensus.Genesis, sample [][]byte) (*CPUFloor, error) {
	genesis, err := ledger.GenesisUTxO(g.InitialFunds)
	if err != nil {
		return nil, fmt.Errorf("the floor's genesis UTxO: %w", err)
	}
	return measureCPUFloor(g.ProtocolParams, genesis, sample)
}

// measureCPUFloor measures the floor on txs (raw, in an order in which
// they apply from genesis), on one goroutine locked to one OS thread.
func measureCPUFloor(params ledger.Params, genesis ledger.MapUTxO, txs [][]byte) (*CPUFloor, error) {
	if len(txs) == 0 {
		return nil, errors.New("no txs to measure the floor on")
	}
	type result struct {
		floor *CPUFloor
		err   error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		f, err := measureFloorHere(params, genesis, txs)
		done <- result{f, err}
	}()
	r := <-done
	return r.floor, r.err
}

// measureFloorHere times each phase on the calling goroutine.
func measureFloorHere(params ledger.Params, genesis ledger.MapUTxO, raw [][]byte) (*CPUFloor, error) {
	clock := "CPU time of this process (user and system, all threads)"
	if _, ok := cpuwork.ProcessTime(); !ok {
		clock = "time on the clock (no CPU clock here)"
	}
	decoded := make([]*ledger.Tx, len(raw))
	decode, err := timePhase(func() error {
		for i, b := range raw {
			tx, err := ledger.DecodeTx(b)
			if err != nil {
				return err
			}
			decoded[i] = tx
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the floor's decode: %w", err)
	}
	witness, err := timePhase(func() error {
		for _, tx := range decoded {
			id := tx.ID()
			for _, w := range tx.Witnesses {
				if !ed25519.Verify(w.VKey[:], id[:], w.Signature[:]) {
					return fmt.Errorf("tx %x: %w", id, ledger.ErrBadWitness)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the floor's witness check: %w", err)
	}
	applyAll := func(apply func(ledger.Params, ledger.UTxO, uint64, *ledger.Tx) (*ledger.Diff, error)) func() error {
		return func() error {
			utxo := maps.Clone(genesis)
			for _, tx := range decoded {
				d, err := apply(params, utxo, 0, tx)
				if err != nil {
					return fmt.Errorf("tx %x: %w", tx.ID(), err)
				}
				applyDiff(utxo, d)
			}
			return nil
		}
	}
	apply, err := timePhase(applyAll(ledger.Apply))
	if err != nil {
		return nil, fmt.Errorf("the floor's apply: %w", err)
	}
	reapply, err := timePhase(applyAll(ledger.Reapply))
	if err != nil {
		return nil, fmt.Errorf("the floor's reapply: %w", err)
	}
	perKTx := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(len(raw)) }
	f := &CPUFloor{
		Measured:             fmt.Sprintf(floorMeasured, len(raw), floorPhaseMin, clock),
		Txs:                  len(raw),
		DecodeSecondsPerKTx:  perKTx(decode),
		WitnessSecondsPerKTx: perKTx(witness),
		ApplySecondsPerKTx:   perKTx(apply),
		ReapplySecondsPerKTx: perKTx(reapply),
	}
	f.FloorSecondsPerKTx = f.DecodeSecondsPerKTx + f.ApplySecondsPerKTx + f.ReapplySecondsPerKTx
	return f, nil
}

// timePhase runs phase until it has taken floorPhaseMin on the clock and
// returns the CPU time of one run: the
// process's, or the clock's where there is no CPU clock. It stops at the
// first error.
func timePhase(phase func() error) (time.Duration, error) {
	cpu := func() time.Duration {
		if t, ok := cpuwork.ProcessTime(); ok {
			return t
		}
		return time.Duration(time.Now().UnixNano())
	}
	startWall, startCPU := time.Now(), cpu()
	rounds := 0
	for rounds == 0 || time.Since(startWall) < floorPhaseMin {
		if err := phase(); err != nil {
			return 0, err
		}
		rounds++
	}
	return (cpu() - startCPU) / time.Duration(rounds), nil
}

// applyDiff writes a diff into a UTxO held in a map.
func applyDiff(utxo ledger.MapUTxO, d *ledger.Diff) {
	for in := range d.Deletes {
		delete(utxo, in)
	}
	for in, out := range d.Inserts {
		utxo[in] = out
	}
}
