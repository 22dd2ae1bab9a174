// Package wan is a devnet's wide-area network, emulated in user space: a
// TCP proxy per directed link of the devnet (node From dials node To at
// the proxy, which forwards to To's libp2p port) that delays and paces
// the bytes each way as a link of a one-way latency and a bandwidth would,
// counts them per link and direction, and can be cut (the chaos mode's
// partitions); and the account, at the end of a run, of whether every
// byte the nodes exchanged went through it.
//
// A link is modelled as a wire each way: a chunk read at time t starts
// serialising when the wire has finished the chunks before it (of any
// connection between the two nodes), takes size/bandwidth, and is
// delivered latency after that, in order. The bytes in flight each way of
// a connection are bounded by the bandwidth-delay product plus a socket
// buffer's worth, so a slow reader holds the writer up as TCP would.
//
// Invariants:
//   - The proxies only forward bytes: the libp2p handshake runs end to
//     end through them, so the nodes see each other's real peer IDs.
//   - The bytes each way between two nodes are shaped by that direction's
//     link alone, whichever of the two dialed the connection carrying
//     them; when only one direction of a pair is laid out, the reverse
//     bytes get its shape too.
//   - One reader and one deliverer goroutine per direction of a
//     connection, one timer each; never a goroutine or a timer per chunk.
//   - A cut closes every connection a link carries and refuses new ones
//     until the link is restored; Close stops every goroutine.
//
// This package must never start a node or read its files: it is handed a
// layout.Layout and what the nodes reported, and only moves and counts
// bytes.
package wan
