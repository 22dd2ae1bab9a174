// Package node is wiring only: New builds every component of a node from a
// Config in one readable order, Run runs their loops under one errgroup, and
// cancelling Run's context shuts them down in reverse order with the
// databases closed cleanly. A database that fails (a full disk, corruption)
// stops Run with that database's error. CheckStores opens the databases
// read-only, as New would, for leiosnode db check. OpenLocal wires the same
// stores, pipeline, mempool and forgers with no network, for benchmarks
// that forge a chain on virtual time; nothing outside this package wires
// them together (internal/layers checks it).
//
// This package must never hold protocol or storage logic of its own, and
// nothing may import it but the binaries and the benchmarks under
// lab/bench (which reach the mempool through its adapters and forge
// chains with OpenLocal).
package node
