// Package chainsync is the chain-sync mini-protocol, in Cardano's shape: a
// client follows a server's selected chain, header by header.
//
// The server answers from a Chain through a Follower: find intersect sets the
// follower's start, request next yields the next roll forward (the RB header,
// its original bytes, and the server's tip) or roll backward; at the tip it
// sends await reply and answers when the chain moves. As Cardano's server
// does, it answers the first request next after an intersection is found
// (or the first of a session that found none, at the origin) with a roll
// backward to that point, and only then rolls forward.
//
// The client intersects with the local chain's recent points (tip, then
// exponentially spaced back to the immutable tip, then origin), then requests
// next forever. A roll backward to the point it is at — the intersection,
// or a keep-alive — changes nothing; so it follows Cardano's servers, and
// this node's older ones, which rolled forward at once, alike. Each header
// must extend the one before it and pass ValidateHeader, which only returns
// a verdict; an accepted header is then handed to OnValidHeader, the hook
// through which the node acts on it.
// Bodies are fetched (by blockfetch, from the same peer, through the Fetch
// callback) in batches while the client is behind and one at a time at the
// tip, and handed to the local chain's AddBlock; the blocks the local chain
// already holds (the common prefix, or a peer behind us) are not fetched.
//
// The host runs it through Service (service.go); the chain, the header
// check and the hooks are its ServiceOptions, so the host sees none of
// them.
//
// A peer whose chain forks from ours before our immutable tip (a node that
// forged alone through a partition longer than k blocks, say) serves a
// deep fork: neither node can ever switch to the other's chain. The client
// sees it at the intersection (the peer holds none of our points but the
// origin, and its tip is not on our chain), or at a header at or below our
// immutable tip that is not ours, or from AddBlock (IsForkTooDeep); it
// fetches nothing, tells the Service, which warns once per peer, and asks
// again after ForkRecheck. It is not a violation: an honest partitioned
// peer serves one. When every peer's chain is such a fork, it is this
// node's own chain that cannot join theirs (ForkStatus.Stranded).
//
// Invariants: a header that does not extend the previous one, fails
// validation, or an intersection the client did not offer, is a violation
// (ErrBrokenChain, ErrInvalidHeader, ErrBadIntersection); a block is added
// only after its header was validated and its body matched it; OnValidHeader
// sees only headers that extend the followed chain and passed validation.
//
// This package must never touch storage except through Chain, LocalChain and
// Follower, and never wait on any peer but its own session's.
package chainsync
