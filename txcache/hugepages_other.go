//go:build !linux

package txcache

import "unsafe"

// adviseHugePages and collapseHugePages are Linux hints; elsewhere the
// table uses the default pages.
func adviseHugePages(unsafe.Pointer, int)   {}
func collapseHugePages(unsafe.Pointer, int) {}
