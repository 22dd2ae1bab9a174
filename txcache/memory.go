package txcache

import (
	"sync/atomic"
	"unsafe"
)

// The table's memory is read at random: every probe of a large table lands
// on a random page, and with 4 KiB pages each one would also miss the TLB
// (and, in a virtual machine, walk two levels of page tables). So the keys
// and the state words are advised to be backed by huge pages, faulted in at
// New rather than on the fetch path, and what the faults got in small pages
// is collapsed into huge ones.

const (
	cacheLine = 64
	pageBytes = 4096    // the smallest page the memory may be mapped with
	hugePage  = 2 << 20 // an x86-64 or arm64 huge page: its size and alignment
)

// newMeta returns n zero state words (see newWords).
func newMeta(n uint64) []atomic.Uint32 {
	w := newWords((n + 1) / 2)
	return unsafe.Slice((*atomic.Uint32)(unsafe.Pointer(&w[0])), n)
}

// newKeys returns n zero keys (see newWords).
func newKeys(n uint64) [][4]atomic.Uint64 {
	w := newWords(4 * n)
	return unsafe.Slice((*[4]atomic.Uint64)(unsafe.Pointer(&w[0])), n)
}

// newWords returns n zero words starting on a cache line, so that no key
// straddles two lines and a state word's line is the one prefetched. Two
// MiB or more of them start on a huge-page boundary (the allocation has up
// to one huge page more, never touched), in huge pages where the kernel has
// them, and faulted in.
func newWords(n uint64) []atomic.Uint64 {
	align := uint64(cacheLine)
	if n*8 >= hugePage {
		align = hugePage
	}
	buf := make([]atomic.Uint64, n+align/8)
	skip := (align - uint64(uintptr(unsafe.Pointer(&buf[0])))%align) % align / 8
	words := buf[skip : skip+n : skip+n]
	if n*8 < hugePage {
		return words
	}
	p, bytes := unsafe.Pointer(&words[0]), int(n*8)
	adviseHugePages(p, bytes)
	for i := 0; i < len(words); i += pageBytes / 8 {
		words[i].Store(0)
	}
	collapseHugePages(p, bytes)
	return words
}
