package leiosdb

import (
	"fmt"
	"os"
	"path/filepath"
)

// DropPageCache asks the kernel to evict the files of the store in dir from
// the page cache (fadvise DONTNEED), for cold-read benchmarks. Dirty pages
// cannot be evicted, so each file is synced first. Pebble's own block cache
// is not touched: for a fully cold store, Close the DB, call this, and Open
// it again.
func DropPageCache(dir string) error {
	files, err := Files(dir)
	if err != nil {
		return err
	}
	for _, name := range files {
		if err := dropFile(name); err != nil {
			return fmt.Errorf("leiosdb: drop page cache of %s: %w", name, err)
		}
	}
	return nil
}

// Files lists the regular files of the store in dir (tables, WAL, manifest).
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("leiosdb: %w", err)
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	return files, nil
}

// DropPageCache flushes the memtable and evicts the store's files from the
// page cache; see the function DropPageCache.
func (db *DB) DropPageCache() error {
	done, err := db.beginRead()
	if err != nil {
		return err
	}
	defer done()
	if err := db.store.Flush(); err != nil {
		return fmt.Errorf("leiosdb: flush: %w", err)
	}
	return DropPageCache(db.dir)
}
