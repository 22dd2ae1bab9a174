package txcache

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// probeDB is the LeiosDB side of the benchmark: a store in dir holding the
// workload's txs, probed with HasTxs.
type probeDB struct {
	dir  string
	opts leiosdb.Options
	db   *leiosdb.DB
}

// markerPrefix names the file that marks a directory as holding a finished
// population; the suffix is its shape, so a reused directory is never
// measured under another shape's name.
const markerPrefix = "leiosbench-txcache-"

func markerName(w *workload) string {
	return fmt.Sprintf("%s%dx%d", markerPrefix, w.ebs, w.txsPerEB)
}

// openProbeDB opens the store in dir and populates it with the workload,
// unless a previous run already has (its marker file is there). It returns
// the population's measurements; reused is true when there was nothing to do.
func openProbeDB(dir string, w *workload, progress io.Writer) (_ *probeDB, pop population, reused bool, err error) {
	marker := filepath.Join(dir, markerName(w))
	if err := checkMarkers(dir, filepath.Base(marker)); err != nil {
		return nil, population{}, false, err
	}
	_, statErr := os.Stat(marker)
	reused = statErr == nil
	p := &probeDB{
		dir: dir,
		opts: leiosdb.Options{
			Limits: dbLimits(w.txsPerEB),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		},
	}
	if err := p.open(); err != nil {
		return nil, population{}, false, err
	}
	if !reused {
		fmt.Fprintf(progress, "populating the LeiosDB in %s (%d txs; this takes a while)...", dir, w.total())
		if pop, err = p.populate(w); err != nil {
			p.close()
			return nil, population{}, false, err
		}
		fmt.Fprintf(progress, " done in %s\n", fmtDuration(time.Duration(pop.TimeNs)))
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			p.close()
			return nil, population{}, false, err
		}
	}
	// Reopen, so that the measurements start from a store as a node would
	// find it after a restart, and let the compactions the population left
	// pending finish before timing anything.
	if err := p.reopen(); err != nil {
		return nil, population{}, false, err
	}
	settle()
	if err := p.checkHolds(w); err != nil {
		p.close()
		return nil, population{}, false, err
	}
	pop.DiskBytes, err = dirBytes(dir)
	return p, pop, reused, err
}

// checkMarkers refuses a directory populated with another shape: its extra
// txs would make the probe measure a bigger store than the one reported.
func checkMarkers(dir, want string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, markerPrefix) && name != want {
			return fmt.Errorf("%s holds another population (%s); use another --db-dir", dir, name)
		}
	}
	return nil
}

// dbLimits admit the workload's EBs: a body of 15,058 entries (~542 kB)
// exceeds block.DefaultEBLimits, as the encoding-independent ceiling
// does. The store validates each body against them on insert.
func dbLimits(txsPerEB int) block.EBLimits {
	d := block.DefaultEBLimits
	return block.EBLimits{
		MaxBodyBytes:    max(d.MaxBodyBytes, 40*txsPerEB+16),
		MaxClosureBytes: max(d.MaxClosureBytes, txBytes*txsPerEB),
		MaxTxs:          max(d.MaxTxs, txsPerEB),
	}
}

// populate inserts every EB as the node would: point, body, closure. A run
// killed midway leaves no marker; the next run inserts again, which the
// store treats as no-ops for what it holds.
func (p *probeDB) populate(w *workload) (population, error) {
	start := time.Now()
	txs := make([][]byte, w.txsPerEB)
	for eb := range w.ebs {
		body, err := block.NewEBBody(w.bodies[eb], p.opts.Limits)
		if err != nil {
			return population{}, fmt.Errorf("EB %d: %w", eb, err)
		}
		point := block.Point{Slot: uint64(eb + 1), Hash: body.Hash()}
		if err := p.db.InsertPoint(point, body.Size()); err != nil {
			return population{}, err
		}
		if _, err := p.db.InsertBody(point, body.Bytes()); err != nil {
			return population{}, err
		}
		for i := range txs {
			txs[i] = txOf(eb, i)
		}
		if _, err := p.db.InsertTxs(block.HashTxs(txs)); err != nil {
			return population{}, err
		}
	}
	return population{TimeNs: time.Since(start).Nanoseconds()}, nil
}

// checkHolds verifies that the oldest and the newest EBs' txs are all held,
// so a reused directory holds what the marker says.
func (p *probeDB) checkHolds(w *workload) error {
	out := make([]bool, w.txsPerEB)
	for _, eb := range []int{0, w.ebs - 1} {
		n, err := p.db.HasTxs(w.hashes[eb], out)
		if err != nil {
			return err
		}
		if n != w.txsPerEB {
			return fmt.Errorf("leiosdb in %s holds %d of the %d txs of EB %d; remove it and run again",
				p.dir, n, w.txsPerEB, eb)
		}
	}
	return nil
}

// probe is one timed lookup batch: HasTxs into out.
func (p *probeDB) probe(batch []block.Hash, out []bool) (int, error) {
	return p.db.HasTxs(batch, out)
}

// coldStart empties both caches a probe could hit: Pebble's block cache
// (by closing the store) and the kernel's page cache of its files
// (fadvise DONTNEED); then it reopens the store.
func (p *probeDB) coldStart() error {
	if err := p.db.Close(); err != nil {
		return err
	}
	if err := leiosdb.DropPageCache(p.dir); err != nil {
		return err
	}
	return p.open()
}

func (p *probeDB) reopen() error {
	if err := p.db.Close(); err != nil {
		return err
	}
	return p.open()
}

func (p *probeDB) open() error {
	db, err := leiosdb.Open(p.dir, p.opts)
	if err != nil {
		return err
	}
	p.db = db
	return nil
}

func (p *probeDB) close() error { return p.db.Close() }

// dirBytes is the size of the store's files.
func dirBytes(dir string) (int64, error) {
	files, err := leiosdb.Files(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, name := range files {
		info, err := os.Stat(name)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed by a compaction meanwhile
		}
		if err != nil {
			return 0, err
		}
		total += info.Size()
	}
	return total, nil
}

// settle waits until the process is nearly idle — until it uses under a
// tenth of a core over a quarter second — so that the compactions Pebble
// runs after a population or an open do not land in the measurements. It
// gives up after two minutes.
func settle() {
	const window = 250 * time.Millisecond
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		before, ok := cpuwork.ProcessTime()
		if !ok {
			time.Sleep(2 * time.Second)
			return
		}
		time.Sleep(window)
		if after, _ := cpuwork.ProcessTime(); after-before < window/10 {
			return
		}
	}
}
