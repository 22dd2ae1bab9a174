// Package blockfetch is the block-fetch mini-protocol: a client asks for a
// range of blocks (from, to: points of the server's chain, inclusive) and the
// server streams them, each as the block's original bytes.
//
// The client checks every block as it arrives: it decodes, its body matches
// its header (CheckBody), the first is `from`, each extends the previous one,
// and the last is `to`. Any mismatch is a violation (ErrBlockMismatch) that
// ends the session; a server without the range answers no blocks
// (ErrNoBlocks for the caller, not a violation).
//
// The host runs it through Service (service.go), which only serves: chain
// sync's client is the one that fetches, over a stream of its own for each
// range (FetchRange), so no block-fetch stream waits idle for the next
// block and the server's idle timeout can be short.
//
// A range is served as it is read (Blocks): the server never holds more than
// the block it is sending, whatever range a peer asks for.
//
// This package must never touch storage except through the Blocks
// callback, and never wait on any peer but its own session's.
package blockfetch
