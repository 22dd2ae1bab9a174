package sync

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/node"
)

// validateChain measures the node's own validation rate: the chain's
// blocks, already in memory, applied in order to a fresh chain database
// by one goroutine with GOMAXPROCS 1 (Pebble's background work shares
// that core), through the node's ApplyBlock: header checks (VRF, issuer
// signature), certificates, and every tx with its witnesses — a fresh node
// has none of them in its mempool. The certified closures come from a
// copy of the forger's LeiosDB: storing them is not validation, fetching
// them is the sync's part.
func validateChain(chain *syncChain, dir string) (*syncRun, error) {
	cfg, err := config.Load(chain.layout.Nodes[0].ConfigFile)
	if err != nil {
		return nil, err
	}
	_, leiosSource := nodeDatabases(cfg)
	fresh := *cfg
	fresh.DatabasePath = dir
	_, leiosDir := nodeDatabases(&fresh)
	if err := copyDir(leiosSource, leiosDir); err != nil {
		return nil, fmt.Errorf("copying the LeiosDB: %w", err)
	}
	local, err := node.OpenLocal(&fresh, node.LocalOptions{})
	if err != nil {
		return nil, err
	}
	defer local.Close()
	db := local.Chain()

	run := &syncRun{Peers: 0}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.GC() // the forging's garbage is not the validation's
	started := time.Now()
	var txs uint64
	for _, blk := range chain.blocks {
		res, err := db.AddBlock(blk)
		if err != nil {
			return nil, fmt.Errorf("validating block %d: %w", blk.Header.BlockNumber, err)
		}
		if !res.Adopted {
			return nil, fmt.Errorf("validating block %d: not adopted", blk.Header.BlockNumber)
		}
		txs = db.TxsOnChain()
		run.Curve = append(run.Curve, syncSample{
			Seconds: time.Since(started).Seconds(), Slot: blk.Header.Slot, Block: blk.Header.BlockNumber, Txs: txs,
		})
	}
	run.Seconds = time.Since(started).Seconds()
	if txs != chain.stats.Txs {
		return nil, fmt.Errorf("validation applied %d txs, the chain holds %d", txs, chain.stats.Txs)
	}
	run.rates(chain.stats)
	return run, nil
}

// copyDir copies the regular files of a closed store's directory. Pebble
// deletes obsolete files in the background, even after Close: a file that
// is gone by the time it is copied was not part of the store.
func copyDir(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path != from {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return errors.New(path + ": not a regular file")
		}
		return copyFile(path, target)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
