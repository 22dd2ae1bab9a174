package txcache

import (
	"syscall"
	"unsafe"
)

// adviseHugePages asks the kernel to back the slots with huge pages: every
// probe of a large table lands on a random page, and with 4 KiB pages each
// one would also miss the TLB. Only a hint; errors are ignored.
func adviseHugePages(slots []slot) {
	if len(slots) == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&slots[0])), len(slots)*SlotBytes)
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
