// Package layers holds the tests that keep the house's import rules
// (ARCHITECTURE.md): every package has a rank and imports only packages of
// a lower rank, and a few rules say more than ranks can. It has no code.
package layers
