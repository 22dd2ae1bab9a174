package machine

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// HugePageWords backs words with huge pages as the txcache's table does:
// advised before the faults, collapsed after (hints: errors leave the
// default pages).
func HugePageWords(words []uint64) {
	if len(words) == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	for i := 0; i < len(words); i += 4096 / 8 {
		words[i] = 1
	}
	_ = unix.Madvise(b, unix.MADV_COLLAPSE)
}
