package faulttest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// Disk is a file system of a fixed size over another, for the stores'
// disk-full tests: a write or a preallocation that would take its files
// past the size fails with ENOSPC, writing nothing, as on a full disk, and
// a file removed gives its space back. A store opened on it fills it as it
// would a small disk, without root or a mount.
//
// A file takes the bytes up to the end of its furthest write or
// preallocation; directories and the store's LOCK take none.
type Disk struct {
	vfs.FS

	mu    sync.Mutex
	size  int64
	used  int64
	files map[string]int64 // bytes each file takes, by its cleaned path
}

// NewDisk is a disk under dir holding what dir's files take now and free
// bytes more: 0 is a disk already full.
func NewDisk(base vfs.FS, dir string, free int64) (*Disk, error) {
	d := &Disk{FS: base, files: map[string]int64{}}
	names, err := base.List(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, name := range names {
		path := base.PathJoin(dir, name)
		if info, err := base.Stat(path); err == nil && !info.IsDir() {
			d.files[filepath.Clean(path)] = info.Size()
			d.used += info.Size()
		}
	}
	d.size = d.used + free
	return d, nil
}

// Free is what the disk has left.
func (d *Disk) Free() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.size - d.used
}

// take makes name take end bytes at least, if the disk has room.
func (d *Disk) take(op, name string, end int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	name = filepath.Clean(name)
	more := end - d.files[name]
	if more <= 0 {
		return nil
	}
	if d.used+more > d.size {
		return &fs.PathError{Op: op, Path: name, Err: syscall.ENOSPC}
	}
	d.files[name] += more
	d.used += more
	return nil
}

func (d *Disk) forget(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	name = filepath.Clean(name)
	d.used -= d.files[name]
	delete(d.files, name)
}

func (d *Disk) move(from, to string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	from, to = filepath.Clean(from), filepath.Clean(to)
	if from == to {
		return
	}
	d.used -= d.files[to]
	d.files[to] = d.files[from]
	delete(d.files, from)
}

func (d *Disk) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := d.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	d.forget(name) // a new file in its place
	return &diskFile{File: f, d: d, name: name}, nil
}

func (d *Disk) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := d.FS.OpenReadWrite(name, category, opts...)
	if err != nil {
		return nil, err
	}
	return &diskFile{File: f, d: d, name: name}, nil
}

func (d *Disk) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := d.FS.ReuseForWrite(oldname, newname, category)
	if err != nil {
		return nil, err
	}
	d.move(oldname, newname)
	return &diskFile{File: f, d: d, name: newname}, nil
}

func (d *Disk) Rename(oldname, newname string) error {
	if err := d.FS.Rename(oldname, newname); err != nil {
		return err
	}
	d.move(oldname, newname)
	return nil
}

func (d *Disk) Remove(name string) error {
	if err := d.FS.Remove(name); err != nil {
		return err
	}
	d.forget(name)
	return nil
}

func (d *Disk) RemoveAll(name string) error {
	err := d.FS.RemoveAll(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	prefix := filepath.Clean(name) + string(filepath.Separator)
	for path, n := range d.files {
		if path == filepath.Clean(name) || strings.HasPrefix(path, prefix) {
			if _, statErr := d.FS.Stat(path); statErr != nil {
				d.used -= n
				delete(d.files, path)
			}
		}
	}
	return err
}

func (d *Disk) GetDiskUsage(string) (vfs.DiskUsage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	free := uint64(d.size - d.used)
	return vfs.DiskUsage{AvailBytes: free, TotalBytes: uint64(d.size), UsedBytes: uint64(d.used)}, nil
}

func (d *Disk) Unwrap() vfs.FS { return d.FS }

// diskFile is a file of a Disk open for writing.
type diskFile struct {
	vfs.File
	d    *Disk
	name string

	mu  sync.Mutex
	pos int64 // where Write writes
}

func (f *diskFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.d.take("write", f.name, f.pos+int64(len(p))); err != nil {
		return 0, err
	}
	n, err := f.File.Write(p)
	f.pos += int64(n)
	return n, err
}

func (f *diskFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.d.take("write", f.name, off+int64(len(p))); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *diskFile) Preallocate(off, length int64) error {
	if err := f.d.take("fallocate", f.name, off+length); err != nil {
		return err
	}
	return f.File.Preallocate(off, length)
}

// FailingWrites is base on which every write to a file whose name ends in
// suffix fails with EIO once the first after writes to such files have
// gone through: a disk that starts refusing writes, for the stores' I/O
// error cases (Pebble's errorfs injects it).
func FailingWrites(base vfs.FS, suffix string, after int) vfs.FS {
	var mu sync.Mutex
	seen := 0
	return errorfs.Wrap(base, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind != errorfs.OpFileWrite && op.Kind != errorfs.OpFileWriteAt || !strings.HasSuffix(op.Path, suffix) {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if seen++; seen <= after {
			return nil
		}
		return &fs.PathError{Op: "write", Path: op.Path, Err: syscall.EIO}
	}))
}

// ChildFS reads the file system a child's job asks for from its words: a
// word "free=BYTES" puts the store in dir on a Disk with that much free, a
// word "eio" on a disk whose write-ahead log writes fail after the first
// few (FailingWrites), "eio=SUFFIX" one whose writes to files ending in
// SUFFIX do. It returns nil for the default file system, and the
// words it did not read.
func ChildFS(dir string, words []string) (vfs.FS, []string, error) {
	var fsys vfs.FS
	var rest []string
	for _, w := range words {
		switch {
		case strings.HasPrefix(w, "free="):
			free, err := strconv.ParseInt(strings.TrimPrefix(w, "free="), 10, 64)
			if err != nil {
				return nil, nil, err
			}
			if fsys, err = NewDisk(vfs.Default, dir, free); err != nil {
				return nil, nil, err
			}
		case w == "eio":
			fsys = FailingWrites(vfs.Default, ".log", 8)
		case strings.HasPrefix(w, "eio="):
			fsys = FailingWrites(vfs.Default, strings.TrimPrefix(w, "eio="), 8)
		default:
			rest = append(rest, w)
		}
	}
	return fsys, rest, nil
}
