package txcache

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/lab/bench/machine"
)

// The cold measurements start with the CPU caches holding none of the
// table: an evictor streams through a buffer larger than the last-level
// cache before each cold batch, outside the timing.

// evictor flushes the CPU caches (and most of the TLB) by reading a buffer
// larger than the last-level cache.
type evictor struct {
	buf  []uint64
	sink uint64
}

// defaultEvictBytes is twice the last-level cache, or 64 MiB if the size is
// not known.
func defaultEvictBytes() int {
	if llc := lastLevelCacheBytes(); llc > 0 {
		return 2 * llc
	}
	return 64 << 20
}

// lastLevelCacheBytes is the size of CPU 0's largest cache level, from
// sysfs; 0 if it cannot be read.
func lastLevelCacheBytes() int {
	largest := 0
	for i := range 8 {
		raw, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cache/index" + strconv.Itoa(i) + "/size")
		if err != nil {
			break
		}
		if n := parseCacheSize(strings.TrimSpace(string(raw))); n > largest {
			largest = n
		}
	}
	return largest
}

// parseCacheSize reads sysfs's "32768K" (or "32M"): 0 if it cannot.
func parseCacheSize(s string) int {
	unit := 1
	switch {
	case strings.HasSuffix(s, "K"):
		unit, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		unit, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n * unit
}

func newEvictor(bytes int) *evictor {
	e := &evictor{buf: make([]uint64, bytes/8)}
	for i := range e.buf {
		e.buf[i] = uint64(i)
	}
	return e
}

// evict reads one word of every cache line of the buffer.
func (e *evictor) evict() {
	var s uint64
	for i := 0; i < len(e.buf); i += 8 {
		s += e.buf[i]
	}
	e.sink += s
}

// memoryFloor is what a lookup in a table of this size cannot beat: one
// independent 8-byte load at a random place in an array as large as the
// table, per key, with no hashing, no probing and nothing to compare. The
// array gets the table's page size: huge pages, asked for and faulted in
// the way the table does.
type memoryFloor struct {
	words []uint64
	sink  uint64
}

func newMemoryFloor(bytes int) *memoryFloor {
	f := &memoryFloor{words: make([]uint64, max(bytes/8, 1))}
	machine.HugePageWords(f.words)
	return f
}

// loadEach makes one load per key, at a place drawn from the key's first
// word (a multiply-shift, as the table reduces its hash): the batch's keys
// are read as a lookup reads them, and the loads are independent, so they
// overlap as far as the CPU lets them.
func (f *memoryFloor) loadEach(batch []block.Hash) {
	n := uint64(len(f.words))
	var s uint64
	for i := range batch {
		at, _ := bits.Mul64(binary.LittleEndian.Uint64(batch[i][:8]), n)
		s += f.words[at]
	}
	f.sink += s
}

// hugePages is what the run saw of transparent huge pages.
type hugePages struct {
	// Mode is the bracketed choice of
	// /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
	// "never"), or "unknown".
	Mode string `json:"mode"`
	// TableBytes, ColdTableBytes and FloorBytes are how much of the
	// txcache's tables (the populated one, the cold path's) and of the
	// floor's array the kernel backed with huge pages: the growth of
	// AnonHugePages (/proc/self/smaps_rollup) while each was made; -1 if it
	// cannot be read.
	TableBytes     int64 `json:"table_huge_bytes"`
	ColdTableBytes int64 `json:"cold_table_huge_bytes"`
	FloorBytes     int64 `json:"floor_huge_bytes"`
}

// transparentHugePageMode reads the THP mode, or "unknown".
func transparentHugePageMode() string {
	raw, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return "unknown"
	}
	s := string(raw)
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return "unknown"
	}
	return s[i+1 : j]
}

// anonHugeBytes is the process's AnonHugePages; -1 if it cannot be read.
func anonHugeBytes() int64 {
	raw, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "AnonHugePages:" && f[2] == "kB" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return -1
}

// hugeGrowth runs make and returns how much AnonHugePages grew meanwhile
// (-1 if it cannot be read).
func hugeGrowth(make func()) int64 {
	before := anonHugeBytes()
	make()
	after := anonHugeBytes()
	if before < 0 || after < 0 {
		return -1
	}
	return after - before
}
