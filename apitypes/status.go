package apitypes

import "time"

// Status is the node's state as GET /status returns it.
type Status struct {
	Slot uint64 `json:"slot"`
	// SystemStart and SlotLengthMs are the network's slot clock, so that a
	// tool dates a slot (when a block was forged) without the genesis file.
	SystemStart   time.Time `json:"systemStart"`
	SlotLengthMs  int64     `json:"slotLengthMs"`
	Tip           TipStatus `json:"tip"`
	ImmutableTip  TipStatus `json:"immutableTip"`
	Peers         []Peer    `json:"peers"` // connected, sorted by ID
	BlocksForged  uint64    `json:"blocksForged"`
	BlocksAdopted uint64    `json:"blocksAdopted"`
	Errors        uint64    `json:"errors"`
	PeerID        string    `json:"peerId"`
	Producer      bool      `json:"producer"`
	// Mempool is the mempool's size.
	Mempool MempoolStatus `json:"mempool"`
	// TxsOnChain is the number of txs in the selected chain, and
	// CertRBsOnChain the number of its blocks that certify an EB: both from
	// the chain, so a restart keeps them. BlocksForged, BlocksAdopted,
	// Errors and the counts in Leios are this process's, since it started.
	TxsOnChain     uint64 `json:"txsOnChain"`
	CertRBsOnChain uint64 `json:"certRBsOnChain"`
	// Leios is the endorser-block diffusion state.
	Leios LeiosStatus `json:"leios"`
	// RecentBlocks are the last blocks of the selected chain, tip first, so
	// tools can compare chains right up to the tip.
	RecentBlocks []TipStatus `json:"recentBlocks"`
	// Forks tells whether the peers' chains join this node's.
	Forks ForksStatus `json:"forks"`
	// Admission is the node's edge: whether it takes txs in now, and what
	// it refused since it started.
	Admission *AdmissionStatus `json:"admission,omitempty"`
	// ProcessCPUSeconds is the CPU time (user and system) the node's
	// process spent since it started; CPUSeconds the same by the work it
	// was spent on (package cpuwork: the Go profiler's samples, labelled by
	// subsystem), absent when not measured.
	ProcessCPUSeconds float64            `json:"processCpuSeconds"`
	CPUSeconds        map[string]float64 `json:"cpuSeconds,omitempty"`
	// WriteStalls are, per store, the times Pebble held back all its
	// writes since the node started, and for how long in all.
	WriteStalls map[string]WriteStallStatus `json:"writeStalls"`
}

// WriteStallStatus is a store's write stalls in /status.
type WriteStallStatus struct {
	Count   uint64  `json:"count"`
	Seconds float64 `json:"seconds"`
}

// AdmissionStatus is the node's edge in /status (package admission).
type AdmissionStatus struct {
	// Admitting says whether a submission through this API is taken in
	// now; if not, Reason and Detail say why. PeersAdmitting says the same
	// of tx submission from peers.
	Admitting      bool   `json:"admitting"`
	Reason         string `json:"reason,omitempty"`
	Detail         string `json:"detail,omitempty"`
	PeersAdmitting bool   `json:"peersAdmitting"`
	// Refused counts the submissions refused, by reason; PeerPauses the
	// times tx submission from peers waited for the edge, by reason, and
	// PeersPausedSeconds how long in all.
	Refused            map[string]uint64 `json:"refused"`
	PeerPauses         map[string]uint64 `json:"peerPauses"`
	PeersPausedSeconds float64           `json:"peersPausedSeconds"`
}

// Peer is a connected peer in /status.
type Peer struct {
	// ID is its peer ID.
	ID string `json:"id"`
	// Addr is the remote multiaddr of its connection (of the first, if it
	// has more than one).
	Addr string `json:"addr"`
	// Direction is "inbound" if the peer dialed that connection,
	// "outbound" if this node did.
	Direction string `json:"direction"`
	// Since is when it connected, in UTC to the second (RFC 3339).
	Since time.Time `json:"since"`
	// Leios are the Leios mini-protocols both nodes serve (/leios/fetch/2,
	// /leios/notify/1, …): the set they speak, the newest of each.
	Leios []string `json:"leios,omitempty"`
}

// ForksStatus is what chain sync knows of the peers' chains against this
// node's.
type ForksStatus struct {
	// DeepForks counts the peers found on a chain that forks from this
	// node's deeper than k (security parameter blocks back): each once,
	// until its chain joins this node's again.
	DeepForks uint64 `json:"deepForks"`
	// Stranded: every peer's chain forks from this node's deeper than k.
	// This node's chain can then never join theirs; stop it, delete its
	// database and start it again to resync.
	Stranded bool `json:"stranded"`
	// Peers are the peers on such a fork now, with their tips.
	Peers []ForkedPeer `json:"peers"`
}

// ForkedPeer is a peer whose chain forks from this node's deeper than k.
type ForkedPeer struct {
	ID  string    `json:"id"`
	Tip TipStatus `json:"tip"`
}

// RecentBlockCount is how many blocks /status lists in RecentBlocks.
const RecentBlockCount = 8

// TipStatus is a chain tip in /status.
type TipStatus struct {
	BlockNumber uint64 `json:"blockNumber"`
	Slot        uint64 `json:"slot"`
	Hash        string `json:"hash"`
}

// MempoolStatus is the mempool's size in /status, and its byte bound.
type MempoolStatus struct {
	Txs           int `json:"txs"`
	Bytes         int `json:"bytes"`
	CapacityBytes int `json:"capacityBytes"`
	// Awaited counts, since the node started, the relayed txs admitted once
	// the inputs they had lacked came (a parent admitted after its child,
	// or a block): what a rollback or gossip's order had cut.
	Awaited uint64 `json:"awaited,omitempty"`
}

// LeiosStatus counts endorser blocks in /status. The counts are since the
// node started.
type LeiosStatus struct {
	EBsForged        uint64 `json:"ebsForged"`
	EBsAnnounced     uint64 `json:"ebsAnnounced"`
	BodiesHeld       uint64 `json:"bodiesHeld"`
	ClosuresComplete uint64 `json:"closuresComplete"`
	// EBsCertified counts the CertRBs this node applied, with their
	// closures, as they arrived (a CertRB on a fork that lost included).
	EBsCertified     uint64 `json:"ebsCertified"`
	MissingTxs       int    `json:"missingTxs"`
	RequestsInFlight int    `json:"requestsInFlight"`
	FetchedBytes     uint64 `json:"fetchedBytes"`
	// EBsFetchedWhole came by LeiosFetch v2's multi-block request (a
	// syncing node's catch-up), BodiesFetchedByPoint one body at a time.
	EBsFetchedWhole      uint64 `json:"ebsFetchedWhole"`
	BodiesFetchedByPoint uint64 `json:"bodiesFetchedByPoint"`
	TxsFromMempool       uint64 `json:"txsFromMempool"`
	// Votes: this node's own, and those new to it from peers.
	VotesCast     uint64 `json:"votesCast"`
	VotesReceived uint64 `json:"votesReceived"`
	VotesInvalid  uint64 `json:"votesInvalid"`
	// VotesVerified counts the votes whose signatures were checked (in
	// batches); VerificationsPerVote is that over the distinct valid votes
	// relayed — 1 when no vote is checked twice. VotesRepeated were sent
	// twice by one peer on one stream, VotesShed dropped unchecked past a
	// peer's verification budget.
	VotesVerified        uint64  `json:"votesVerified"`
	VerificationsPerVote float64 `json:"verificationsPerVote"`
	VotesRepeated        uint64  `json:"votesRepeated"`
	VotesShed            uint64  `json:"votesShed"`
	// Equivocations counts the (slot, issuer)s for which this node saw two
	// headers: relayed once as evidence, their EBs never voted for.
	Equivocations     uint64 `json:"equivocations"`
	CertificatesBuilt uint64 `json:"certificatesBuilt"`
	// EBShare is the share of the EB limits this producer's next EB may
	// fill: it halves with each voting window the node missed lately and
	// grows back while they are met (forge's EB budget).
	EBShare float64 `json:"ebShare,omitempty"`
	// CertifiedClosuresMissing counts the closures the selected chain
	// certifies that the LeiosDB lost (deleted, or its newest WAL cut) and
	// the node is fetching again from its peers, since MissingSince.
	CertifiedClosuresMissing int        `json:"certifiedClosuresMissing,omitempty"`
	MissingSince             *time.Time `json:"certifiedClosuresMissingSince,omitempty"`
}
