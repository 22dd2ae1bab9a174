//go:build amd64 || arm64

package txcache

// prefetch asks the CPU to bring the cache line at each address into its
// caches, and returns at once. Unlike a load, a prefetch retires without
// waiting for its line, so a batch's misses stay in flight while the batch
// works on, and the writer's atomic stores (full fences on amd64) do not
// wait for them. The addresses are plain numbers, not pointers: nothing is
// read through them, and storing them costs no write barrier.
//
//go:noescape
func prefetch(addrs []uintptr)
