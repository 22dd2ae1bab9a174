package leiosdb

import (
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
)

// Options configure a DB. The zero value gives the defaults documented on
// each field.
type Options struct {
	// Limits validate inserted EB bodies. Default block.DefaultEBLimits.
	Limits block.EBLimits

	// CacheBytes sizes Pebble's block cache. Default 128 MiB: the membership
	// index of a full volatile window (≈ 2 M txs at ~45 bytes) fits in it.
	CacheBytes int64

	// MemTableBytes sizes one Pebble memtable. Default 64 MiB. The store's
	// keys are hashes, spread over the whole key space, and it is small
	// (the volatile window's EBs, and the certified ones): every level-0
	// file overlaps all of the last level, so each compaction rewrites that
	// level whole, and small memtables (Pebble's 4 MiB) made compactions
	// the store's largest cost under load — a third of the node's CPU at
	// 1,500 tx/s, growing as the store grew. With 64 MiB, most of what the
	// window holds is collected before it is ever flushed, a compaction
	// comes every few hundred megabytes written, and a closure (≤ 12 MB)
	// never goes to the flush queue whole (a batch of half a memtable
	// does). The cost: Pebble preallocates each write-ahead log at 1.1
	// times the memtable size, for each memtable queued for a flush and
	// each old log it keeps for reuse — a few hundred megabytes of disk.
	MemTableBytes uint64

	// BlockBytes is the target size of an uncompressed table block. Default
	// 16 KiB: with bigger blocks than go-ethereum's 4 KiB, the ascending
	// probe of HasTxs more often lands in the block it is already in, and a
	// cold probe reads fewer blocks; a tx read costs a 16 KiB block instead of
	// a 4 KiB one.
	BlockBytes int

	// BloomBitsPerKey sizes the bloom filters on every level, so a probe for a
	// tx that is not held rarely reads a data block. Default 10 (≈1 % false
	// positives).
	BloomBitsPerKey int

	// SyncWrites makes every batch fsync its WAL record before returning.
	// Default false: crash consistency does not need it (each change is one
	// atomic batch and the WAL replays whole batches or none); only the last
	// batches before a crash can be lost, and the network refills them.
	SyncWrites bool

	// Network is the network the store belongs to: stamped on a new store,
	// checked on open. The zero value is a network of its own, for tests.
	Network pebblestore.Network

	// EventBuffer is the channel capacity of each subscription. Default 4096.
	// A subscriber that lets it fill up is cut off (see Subscribe).
	EventBuffer int

	// Logger receives the store's and Pebble's messages. Default
	// slog.Default().
	Logger *slog.Logger

	// Registerer, if set, takes the store's metrics (metrics.go) when Open
	// succeeds. CheckOpen registers nothing.
	Registerer prometheus.Registerer

	// fs replaces the file system Pebble writes to; the fault tests put
	// the store on a small disk or one that fails.
	fs vfs.FS
}

func (o Options) withDefaults() Options {
	if o.Limits == (block.EBLimits{}) {
		o.Limits = block.DefaultEBLimits
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 128 << 20
	}
	if o.MemTableBytes == 0 {
		o.MemTableBytes = 64 << 20
	}
	if o.BlockBytes <= 0 {
		o.BlockBytes = 16 << 10
	}
	if o.BloomBitsPerKey <= 0 {
		o.BloomBitsPerKey = 10
	}
	if o.EventBuffer <= 0 {
		o.EventBuffer = 4096
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// pebbleOptions follows go-ethereum's ethdb/pebble: bloom filters on every
// level (Pebble has none on L0 by default), a shared cache.
// The caller owns cache and must Unref it after Close.
func (o Options) pebbleOptions(cache *pebble.Cache) *pebble.Options {
	po := &pebble.Options{
		Cache:              cache,
		FormatMajorVersion: pebble.FormatNewest,
		MemTableSize:       o.MemTableBytes,
		MaxOpenFiles:       1000,
		FS:                 o.fs,
	}
	for i := range po.Levels {
		po.Levels[i].BlockSize = o.BlockBytes
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(o.BloomBitsPerKey)
	}
	return po
}
