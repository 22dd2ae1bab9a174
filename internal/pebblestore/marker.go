package pebblestore

import (
	"github.com/cockroachdb/pebble/v2/vfs/atomicfs"
)

// Marker is a value kept in the name of a file in the store's directory
// (Pebble's own atomicfs.Marker), outside Pebble: it survives what
// Pebble's write-ahead log may lose, so a store can tell that a reopened
// state is older than one it had made durable.
type Marker struct {
	s *DB
	m *atomicfs.Marker
}

// Marker finds the marker called name and returns it with its value ("" if
// it was never moved).
func (s *DB) Marker(name string) (*Marker, string, error) {
	m, value, err := atomicfs.LocateMarker(s.fs, s.dir, name)
	if err != nil {
		return nil, "", s.errorOf(err)
	}
	if !s.readOnly {
		if err := m.RemoveObsolete(); err != nil {
			m.Close()
			return nil, "", s.errorOf(err)
		}
	}
	return &Marker{s, m}, value, nil
}

// Move sets the marker to value and syncs the directory. A failure is the
// store's fault (atomicfs panics when the directory sync fails).
func (m *Marker) Move(value string) error {
	if err := m.s.Err(); err != nil {
		return err
	}
	if err := m.s.guard(func() error { return m.m.Move(value) }); err != nil {
		return m.s.Fail(err)
	}
	return nil
}

// Close releases the marker's directory handle.
func (m *Marker) Close() error { return m.m.Close() }
