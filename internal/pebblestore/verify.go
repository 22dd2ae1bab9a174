package pebblestore

import (
	"errors"
	"fmt"
)

// Verify runs Pebble's own checks over the whole store: the invariants of
// its levels (CheckLevels), then a read of every key and value, which
// checks the checksum of every block read. It reads everything, so it is
// for leiosnode db check, not for a running node.
func (s *DB) Verify() error {
	if err := s.guard(func() error { return s.CheckLevels(nil) }); err != nil {
		return s.unreadable(err)
	}
	err := s.guard(func() error {
		it, err := s.NewIter(nil)
		if err != nil {
			return err
		}
		for it.First(); it.Valid(); it.Next() {
			if _, err := it.ValueAndErr(); err != nil {
				return errors.Join(err, it.Close())
			}
		}
		return errors.Join(it.Error(), it.Close())
	})
	if err != nil {
		return s.unreadable(err)
	}
	return s.Err()
}

// Corrupt is the error for what a store's own checks found: data that
// cannot be what the store wrote. An *Error already says so: it is
// returned as it is.
func (s *DB) Corrupt(err error) error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	return &Error{Store: s.name, Dir: s.dir, Err: fmt.Errorf("%w: %w", ErrCorrupt, err), Do: s.resync()}
}
