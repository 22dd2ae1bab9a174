// Package layout generates a network: its genesis (from a Template), each
// node's keys, config and topology, and the funded payment keys — on
// loopback, or on several hosts with a self-contained directory per node to
// copy to its host, pools and relays. Write is the genesis command, and the
// first step of a devnet; AddRelay is genesis add, a relay added to a
// written network without touching the other nodes' files. ReadTopology
// reads a network in the Leios simulators' topology format, whose nodes
// of most stake, their stakes' proportions and their links a devnet can
// take.
//
// Invariants:
//   - Paths inside a node's config are relative to the node's directory, so
//     a devnet directory can be moved, and a node's directory copied to its
//     host.
//   - Write refuses a directory that already holds a genesis.json: it
//     never writes a second network over a first. AddRelay changes no file
//     but the new relay's, and never the genesis (a pool is refused).
//   - A devnet whose links go through the supervisor's proxies has one Link
//     per directed pair of peers (every pair of pools, or the pairs of its
//     topology, both ways), and its nodes dial the proxy, never the peer
//     itself; a pool's topology names only the peers it has a link with.
//
// This package must never start a process, dial a node or read a node's
// API: it only writes files and says where they are.
package layout
