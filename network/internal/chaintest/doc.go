// Package chaintest is an in-memory chain for the network tests: a real
// longest-chain store over block.Block values (parent links, chain
// selection with ties kept, switches limited to k blocks deep, followers
// that roll back across forks), a Forger that builds signed blocks, and DB,
// a chain kept in a chaindb database for the tests that need the store's
// own verdicts (a fork deeper than k).
//
// It is test support: it must never be imported outside network/ tests, and
// it holds no package-level state.
package chaintest
