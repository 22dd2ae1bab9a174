package cpuwork

import (
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// gcFrames are the functions at the root of Go's background GC work. The
// runtime starts them itself; GC assists run on the allocating goroutine
// and stay with its kind. runtime._GC is where the profiler puts a sample
// it could not unwind while the runtime was not preemptible (GC work).
var gcFrames = []string{
	"runtime.gcBgMarkWorker",
	"runtime.bgsweep",
	"runtime.bgscavenge",
	"runtime._GC",
}

// storeFrames are the functions of Pebble's background goroutines: flushes,
// compactions and the work they hand to goroutines of their own (writing
// sstables and blob files), the WAL's syncer, deleting obsolete files,
// collecting table stats, validating ingested tables. A goroutine running
// one of them started by the node inherits the node's label, so the stack
// decides. The names include Pebble's major version: after an upgrade the
// store test fails until they are updated.
var storeFrames = []string{
	"github.com/cockroachdb/pebble/v2.(*DB).flush",
	"github.com/cockroachdb/pebble/v2.(*DB).compact",
	"github.com/cockroachdb/pebble/v2.(*DB).collectTableStats",
	"github.com/cockroachdb/pebble/v2.(*DB).validateSSTables",
	"github.com/cockroachdb/pebble/v2.(*cleanupManager).mainLoop",
	"github.com/cockroachdb/pebble/v2/record.(*LogWriter).flushLoop",
	"github.com/cockroachdb/pebble/v2/sstable.(*writeQueue).runWorker",
	"github.com/cockroachdb/pebble/v2/sstable.(*RawColumnWriter).drainWriteQueue",
	"github.com/cockroachdb/pebble/v2/sstable/blob.(*FileWriter).drainWriteQueue",
}

// pebbleLabel is the label key Pebble puts on its flushes, compactions,
// WAL syncs and file deletions, in place of any label they inherited.
const pebbleLabel = "pebble"

// networkPackages are the packages of libp2p's internals, by the prefix of
// their functions' names: the host, swarm, identify, yamux, noise and
// multistream. A labelled goroutine's reads and writes through them stay
// with its label; only unlabelled work in them is network.
var networkPackages = []string{
	"github.com/libp2p/",
	"github.com/flynn/noise.",
	"github.com/multiformats/go-multistream.",
}

// classify is the kind of work a CPU sample did: gc and store by its
// stack (or Pebble's label), whatever its work label, since those
// goroutines may have inherited one; then its work label; then network by
// its stack; else other. A sample the profiler could not unwind (in C
// code not called through cgo, as the race detector's) has only its
// labels to go by.
func classify(s *profile.Sample) Kind {
	if anyFrame(s, func(name string) bool { return slices.Contains(gcFrames, name) }) {
		return GC
	}
	if len(s.Label[pebbleLabel]) > 0 || anyFrame(s, func(name string) bool { return slices.Contains(storeFrames, name) }) {
		return Store
	}
	if values := s.Label[LabelKey]; len(values) > 0 {
		if k := Kind(values[0]); known(k) {
			return k
		}
		return Other
	}
	if anyFrame(s, func(name string) bool { return hasPrefix(name, networkPackages) }) {
		return Network
	}
	return Other
}

// anyFrame reports whether match holds for a function of s's stack,
// inlined ones included.
func anyFrame(s *profile.Sample, match func(name string) bool) bool {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil && match(line.Function.Name) {
				return true
			}
		}
	}
	return false
}

func hasPrefix(name string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}
