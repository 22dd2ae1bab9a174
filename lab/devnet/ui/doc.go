// Package ui is the devnet's live view: one self-contained web page
// (embedded; inline script and style, SVG, no outside assets) fed by
// Server-Sent Events, showing each node's tip and immutable tip, its
// mempool, the latest EBs' way through the nodes stage by stage (announced
// → body → closure → validated → voted → certified) as a timeline, the
// votes on each EB against the quorum, and the txs reaching the chain.
//
// Run hands a View every round of its polls (an Observation: each node's
// GET /status and GET /api/ebs, and the firehose's figures); the View
// turns it into one frame, a JSON document of what the page draws, and
// sends it to every page connected.
//
// Invariants:
//   - Observe never blocks on a page: each page has a small queue of
//     frames, and a frame that finds it full is dropped and counted
//     (Dropped). A page's frames arrive in the order they were observed,
//     each numbered; every frame is the whole state, so a page that missed
//     some is whole again at the next.
//   - A page that connects gets the latest frame at once.
//
// This package must never dial a node or import the API client: what it
// knows of the nodes is what Run polled and handed it.
package ui
