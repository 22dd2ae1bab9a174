package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// lostWAL is refused, the reason a store that Pebble opened is refused,
// unless a write-ahead log the store still needs is gone: that is then the
// cause, and the error names the file. A store of another network is
// refused for that alone.
func (s *DB) lostWAL(refused error) error {
	if errors.Is(refused, ErrOtherNetwork) {
		return refused
	}
	name := s.missingWAL()
	if name == "" {
		return refused
	}
	return &Error{Store: s.name, Dir: s.dir,
		Err: fmt.Errorf("%w: its write-ahead log %s is missing, and with it what the store wrote since its last flush", ErrCorrupt, name),
		Do:  s.resync()}
}

// missingWAL returns the path of the first write-ahead log the store
// still needs, if that file is gone; else "". Pebble replays the logs it
// finds and says nothing of one missing: the store opens older, and is
// refused for what that lost (its stamp, its immutable tip), not for the
// file.
//
// The logs still needed are those numbered from the MANIFEST's oldest
// unflushed log on. That number names a log a rotation created, or, once
// a reopen flushed what it replayed, a number no file took: the log that
// reopen created is then the one before its OPTIONS file, the newest.
func (s *DB) missingWAL() string {
	desc, err := pebble.Peek(s.dir, s.fs)
	if err != nil || !desc.Exists {
		return ""
	}
	first, err := minUnflushedLog(s.fs, desc.ManifestFilename)
	if err != nil {
		return ""
	}
	if _, num, ok := strings.Cut(s.fs.PathBase(desc.OptionsFilename), "OPTIONS-"); ok {
		if options, err := strconv.ParseUint(num, 10, 64); err == nil && options-1 >= first {
			first = options - 1
		}
	}
	name := s.fs.PathJoin(s.dir, fmt.Sprintf("%06d.log", first))
	if _, err := s.fs.Stat(name); err == nil {
		return ""
	}
	return name
}

// The tags of a MANIFEST's version edit that come first in each (Pebble's
// VersionEdit.Encode, LevelDB's format): the comparator's name, then the
// number of the oldest log not flushed.
const (
	tagComparator = 1
	tagLogNumber  = 2
)

// minUnflushedLog reads the MANIFEST at path for the number of the oldest
// write-ahead log not yet flushed to a table: the last a version edit set.
// A torn last record ends the read, as it ends Pebble's.
func minUnflushedLog(fsys vfs.FS, path string) (uint64, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var num uint64
	records := record.NewReader(f, 0)
	for {
		r, err := records.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, record.ErrUnexpectedEOF) || errors.Is(err, record.ErrInvalidChunk) || errors.Is(err, record.ErrZeroedChunk) {
				return num, nil
			}
			return 0, err
		}
		edit, err := io.ReadAll(r)
		if err != nil {
			return num, nil // torn
		}
		if n, ok := logNumber(edit); ok {
			num = n
		}
	}
}

// logNumber finds the log number in one encoded version edit.
func logNumber(edit []byte) (uint64, bool) {
	for len(edit) > 0 {
		tag, n := binary.Uvarint(edit)
		if n <= 0 {
			return 0, false
		}
		edit = edit[n:]
		switch tag {
		case tagComparator:
			size, n := binary.Uvarint(edit)
			if n <= 0 || uint64(len(edit)-n) < size {
				return 0, false
			}
			edit = edit[n+int(size):]
		case tagLogNumber:
			num, n := binary.Uvarint(edit)
			return num, n > 0
		default:
			return 0, false // the log number comes before any other tag
		}
	}
	return 0, false
}
