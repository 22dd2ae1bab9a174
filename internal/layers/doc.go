// Package layers holds the test that keeps the dependency direction of
// DESIGN §4: node → protocols → stores → block, ledger. It has no code.
package layers
