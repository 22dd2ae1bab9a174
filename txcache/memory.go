package txcache

import (
	"sync/atomic"
	"unsafe"
)

// The table's memory is read at random: every probe of a large table lands
// on a random page, and with 4 KiB pages each one would also miss the TLB
// (and, in a virtual machine, walk two levels of page tables). So the slots
// and the tags are advised to be backed by huge pages, faulted in at New
// rather than on the fetch path, and what the faults got in small pages is
// collapsed into huge ones.

const (
	pageBytes = 4096    // the smallest page the memory may be mapped with
	hugePage  = 2 << 20 // an x86-64 or arm64 huge page: its size and alignment
)

// newSlots returns n empty slots in huge pages where the kernel has them,
// faulted in.
// (Its start is not aligned to a huge page: of a table large enough to
// matter, the part before the first boundary is a sliver.)
func newSlots(n uint64) []slot {
	slots := make([]slot, n)
	p, bytes := unsafe.Pointer(&slots[0]), len(slots)*SlotBytes
	adviseHugePages(p, bytes)
	for i := 0; i < len(slots); i += pageBytes / SlotBytes {
		slots[i].state.Store(0)
	}
	collapseHugePages(p, bytes)
	return slots
}

// newTags returns n zero tag words. Two MiB or more of them start on a
// huge-page boundary (the allocation has up to one huge page more, never
// touched), in huge pages where the kernel has them, and faulted in.
func newTags(n int) []atomic.Uint64 {
	const words = hugePage / 8
	if n < words {
		return make([]atomic.Uint64, n)
	}
	buf := make([]atomic.Uint64, n+words)
	skip := (hugePage - uintptr(unsafe.Pointer(&buf[0]))%hugePage) % hugePage / 8
	tags := buf[skip : skip+uintptr(n) : skip+uintptr(n)]
	p := unsafe.Pointer(&tags[0])
	adviseHugePages(p, n*8)
	for i := 0; i < len(tags); i += pageBytes / 8 {
		tags[i].Store(0)
	}
	collapseHugePages(p, n*8)
	return tags
}
