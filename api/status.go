package api

// Status is the node's state as GET /status returns it.
type Status struct {
	Slot          uint64    `json:"slot"`
	Tip           TipStatus `json:"tip"`
	ImmutableTip  TipStatus `json:"immutableTip"`
	Peers         []string  `json:"peers"`
	BlocksForged  uint64    `json:"blocksForged"`
	BlocksAdopted uint64    `json:"blocksAdopted"`
	Errors        uint64    `json:"errors"`
	PeerID        string    `json:"peerId"`
	Producer      bool      `json:"producer"`
	// Mempool is the mempool's size.
	Mempool MempoolStatus `json:"mempool"`
	// TxsOnChain is the number of txs in the selected chain.
	TxsOnChain uint64 `json:"txsOnChain"`
	// Leios is the endorser-block diffusion state.
	Leios LeiosStatus `json:"leios"`
	// RecentBlocks are the last blocks of the selected chain, tip first, so
	// tools can compare chains right up to the tip.
	RecentBlocks []TipStatus `json:"recentBlocks"`
}

// RecentBlockCount is how many blocks /status lists in RecentBlocks.
const RecentBlockCount = 8

// TipStatus is a chain tip in /status.
type TipStatus struct {
	BlockNumber uint64 `json:"blockNumber"`
	Slot        uint64 `json:"slot"`
	Hash        string `json:"hash"`
}

// MempoolStatus is the mempool's size in /status.
type MempoolStatus struct {
	Txs   int `json:"txs"`
	Bytes int `json:"bytes"`
}

// LeiosStatus counts endorser blocks in /status. The counts are since the
// node started.
type LeiosStatus struct {
	EBsForged        uint64 `json:"ebsForged"`
	EBsAnnounced     uint64 `json:"ebsAnnounced"`
	BodiesHeld       uint64 `json:"bodiesHeld"`
	ClosuresComplete uint64 `json:"closuresComplete"`
	MissingTxs       int    `json:"missingTxs"`
	RequestsInFlight int    `json:"requestsInFlight"`
	FetchedBytes     uint64 `json:"fetchedBytes"`
}
