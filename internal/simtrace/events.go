package simtrace

// The events, as the shared format names and shapes them. Linear Leios
// has no input blocks and no pipelines: those fields are empty lists and
// pipeline 0.
//
// Ids follow the readers of the format rather than the node's own keys.
// The trace verifier finds an EBGenerated's RB by the EB's id, and an EB's
// receipt by both, so an EB is named by the header hash of the RB that
// announced it, as a block is: the simulators' "<slot>-<producer>" names
// do the same, an RB and its EB sharing one. A vote bundle (one vote) is
// "<EB id>-<seat>": every node that relays the vote can name it so,
// whichever protocol carried it, and each bundle has an id of its own.

// Slot is a slot this node's clock entered.
type Slot struct {
	Node string `json:"node"`
	Slot uint64 `json:"slot"`
}

// BlockRef names a block by its id.
type BlockRef struct {
	ID string `json:"id"`
}

// Endorsement is the EB an RB certifies.
type Endorsement struct {
	EB BlockRef `json:"eb"`
}

// RBGenerated is an RB this node forged.
type RBGenerated struct {
	ID             string       `json:"id"`
	Slot           uint64       `json:"slot"`
	Producer       string       `json:"producer"`
	SizeBytes      int          `json:"size_bytes"`
	TxPayloadBytes int          `json:"tx_payload_bytes"`
	Parent         *BlockRef    `json:"parent"`      // null after genesis
	Endorsement    *Endorsement `json:"endorsement"` // null unless a CertRB
	Transactions   NoTxs        `json:"transactions"`
}

// EBGenerated is an EB this node forged, announced by its RB.
type EBGenerated struct {
	ID             string     `json:"id"`
	Slot           uint64     `json:"slot"`
	Producer       string     `json:"producer"`
	SizeBytes      int        `json:"size_bytes"`
	Pipeline       int        `json:"pipeline"`
	InputBlocks    []BlockRef `json:"input_blocks"`
	EndorserBlocks []BlockRef `json:"endorser_blocks"`
	Transactions   NoTxs      `json:"transactions"`
}

// NoTxs is a generated block's list of transactions, written empty: the
// format's readers require the key (leios-trace-hs) but disagree on what an
// element is (leios-trace-hs: a number; trace-processor: an EB's {"id": …},
// an RB's string), and this node writes no tx events an element could
// refer to.
type NoTxs struct{}

// MarshalJSON writes the empty list.
func (NoTxs) MarshalJSON() ([]byte, error) { return []byte("[]"), nil }

// VTBundleGenerated is this node's vote on an EB: a bundle of one.
type VTBundleGenerated struct {
	ID        string         `json:"id"`
	Slot      uint64         `json:"slot"`
	Producer  string         `json:"producer"`
	SizeBytes int            `json:"size_bytes"`
	Pipeline  int            `json:"pipeline"`
	Votes     map[string]int `json:"votes"` // EB id → votes
}

// Received is an RB, EB or vote bundle this node received (Kind "RB",
// "EB", "VTBundle"); Sender is the peer, when known.
type Received struct {
	Kind      string `json:"-"`
	Sender    string `json:"sender,omitempty"`
	Recipient string `json:"recipient"`
	ID        string `json:"id"`
	Slot      uint64 `json:"slot"` // the RB's, or the EB's a vote is on
}

// Sent is an RB, EB or vote bundle this node sent a peer.
type Sent struct {
	Kind         string `json:"-"`
	Sender       string `json:"sender"`
	Recipient    string `json:"recipient"`
	MsgSizeBytes int    `json:"msg_size_bytes"`
	ID           string `json:"id"`
	Slot         uint64 `json:"slot"` // the RB's, or the EB's a vote is on
}

// CPU is work this node did on one item, timed as it ran: TaskType one of
// the format's (ValRB, ValEB, ValVote, GenRB, GenEB, GenVote, ValTX, …).
type CPU struct {
	Node     string  `json:"node"`
	CPUTimeS float64 `json:"cpu_time_s"`
	TaskType string  `json:"task_type"`
	ID       string  `json:"id"`
}

func (Slot) eventType() string              { return "Slot" }
func (RBGenerated) eventType() string       { return "RBGenerated" }
func (EBGenerated) eventType() string       { return "EBGenerated" }
func (VTBundleGenerated) eventType() string { return "VTBundleGenerated" }
func (r Received) eventType() string        { return r.Kind + "Received" }
func (s Sent) eventType() string            { return s.Kind + "Sent" }
func (CPU) eventType() string               { return "Cpu" }
