package leiosdb

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropFile syncs name (dirty pages cannot be evicted) and evicts it from the
// page cache.
func dropFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // removed by a compaction meanwhile
		}
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
