package chaindb

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// Write options, in the go-ethereum ethdb/pebble spirit.
//
// Every multi-key change is one batch, and Pebble replays its WAL batch by
// batch, in order, stopping at the first torn record. Whether a batch is
// synced therefore never decides consistency, only how far back a crash can
// take us: it can lose the NoSync batches written after the last synced one
// (Pebble may still hold them in its WAL buffer when the process dies), never
// part of a batch and never a synced one.
//
//   - A batch that changes the selection is Sync: the tip is a promise to
//     peers (chain sync serves it, the forge builds on it) and the immutable
//     tip is what other stores prune against, so neither may go back after
//     it was announced. That is one fsync per adopted block (about one a
//     second on a devnet).
//   - A batch that only stores a block off the selected chain is NoSync: if
//     it is lost, a peer serves it again.
var (
	syncSelection = pebble.Sync
	noSyncStore   = pebble.NoSync
)

// pebbleOptions: a block cache, bloom filters on every level (a UTxO
// lookup of a missing input, and the "is this block stored" probe, are
// point reads that mostly miss), and small memtables (memTableBytes).
func pebbleOptions(opts Options, cache *pebble.Cache) *pebble.Options {
	po := &pebble.Options{
		Cache:              cache,
		MemTableSize:       memTableBytes,
		MaxOpenFiles:       1024,
		FormatMajorVersion: pebble.FormatNewest,
		FS:                 opts.fs,
	}
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	return po
}

const (
	// cacheBytes is the size of Pebble's block cache.
	cacheBytes = 64 << 20
	// memTableBytes is the size of one memtable, 16 MiB. Under load the
	// chain takes a megabyte a second (blocks, and the UTxO diffs the
	// immutable tip flushes, keyed by tx ids spread over the key space):
	// with small memtables every flush's level-0 file overlaps all of the
	// last level, and compactions rewrote it every few seconds. Pebble
	// preallocates each write-ahead log at 1.1 times the memtable size,
	// for each memtable queued for a flush and each old log it keeps for
	// reuse (with Pebble's default threshold of two memtables, a handful
	// at most): under a hundred megabytes.
	memTableBytes = 16 << 20
)
