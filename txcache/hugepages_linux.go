package txcache

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHugePages asks the kernel to back the n bytes at p with huge pages
// when they are faulted in (transparent huge pages, "madvise" mode or
// "always"). Only a hint; errors are ignored.
func adviseHugePages(p unsafe.Pointer, n int) {
	if n > 0 {
		_ = unix.Madvise(unsafe.Slice((*byte)(p), n), unix.MADV_HUGEPAGE)
	}
}

// collapseHugePages, once the n bytes at p are faulted in, asks the kernel
// to turn into huge pages what it backed with small ones: a fault gets a
// huge page only if one is free at that moment (compaction backs off after
// a failure), a collapse works at it (Linux 6.1 and later). Errors, an
// older kernel's among them, are ignored.
func collapseHugePages(p unsafe.Pointer, n int) {
	if n > 0 {
		_ = unix.Madvise(unsafe.Slice((*byte)(p), n), unix.MADV_COLLAPSE)
	}
}
