//go:build !amd64 && !arm64

package txcache

// prefetch is a hint with no instruction here: lookups still run their
// stages, each slot read when it is needed.
func prefetch([]uintptr) {}
