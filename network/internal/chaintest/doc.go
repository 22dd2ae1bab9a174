// Package chaintest is an in-memory chain for the network tests: a real
// longest-chain store over block.Block values (parent links, chain
// selection with ties kept, switches limited to k blocks deep, followers
// that roll back across forks), and a Forger that builds signed blocks.
//
// It is test support: it must never be imported outside network/ tests, and
// it holds no package-level state.
package chaintest
