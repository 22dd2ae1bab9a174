// Package pebblestore opens a Pebble database the way each of the node's
// stores (chaindb, leiosdb) needs it, and turns the ways Pebble reports a
// failure into one error that names the store, the file and what to do.
//
// It owns five things:
//   - Creation: a store is created only in a new or empty directory, with
//     its first batch (the store's own initial records and the stamp of
//     its network) written whole. An existing directory is opened with
//     pebble.Options.ErrorIfNotExists and must carry the stamp, so a lost
//     MANIFEST or marker file is an error, never a new empty store.
//   - Refusing before writing: an existing store is opened read-only and
//     checked (Pebble's open, the stamp, the store's own Options.Check)
//     before it is opened for writing. It must never open for writing a
//     store it may still refuse: Pebble would flush its logs and delete
//     what its MANIFEST does not name.
//   - The network stamp: the hash of the genesis file the store was
//     created under, checked at every open.
//   - Faults: Pebble panics on a write-ahead-log write it cannot complete,
//     calls Logger.Fatalf (which must not return) on a commit or MANIFEST
//     write that failed, and reports background errors and corruption
//     through its EventListener. Each of these becomes the store's fault:
//     one error, after which the store refuses writes and Failed is
//     closed, so its owner can stop; no call into Pebble waits past it (a
//     flush Pebble retries for ever on a full disk), and the store creates
//     no more files nor writes its tables: a table left empty by the
//     fault is removed as the store is abandoned. What was committed before the fault stays consistent
//     on disk: every change is one batch, and Pebble replays its
//     write-ahead log batch by batch.
//   - Markers: values kept in file names beside the store (Pebble's
//     atomicfs.Marker), which survive what the write-ahead log may lose.
//
// It never decides what a store keeps, nor how big its memtables and
// caches are: each store sizes its own pebble.Options.
package pebblestore
