// Package node is wiring only: New builds every component of a node from a
// Config in one readable order, Run runs their loops under one errgroup, and
// cancelling Run's context shuts them down in reverse order with the
// databases closed cleanly.
//
// This package must never hold protocol or storage logic of its own, and
// nothing may import it but the binary.
package node
