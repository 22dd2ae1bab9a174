// Package hosttest runs network hosts on loopback for the tests of the host
// and of the protocols it runs: a Node is a running Host with its metrics
// and logs at hand, stopped when the test ends.
//
// It is test support: it must never be imported outside network/ tests, and
// it holds no package-level state.
package hosttest
