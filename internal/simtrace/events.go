package simtrace

// The events, as the shared format names and shapes them. Ids are hex
// hashes; a block's id is its header hash, an EB's its EB hash, a vote
// bundle's "<slot>-<voter>". Linear Leios has no input blocks and no
// pipelines: those fields are empty lists and pipeline 0.

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
}

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
	Slot      uint64 `json:"slot,omitempty"` // 0: not known from the message
}

// Sent is an RB, EB or vote bundle this node sent a peer.
type Sent struct {
	Kind         string `json:"-"`
	Sender       string `json:"sender"`
	Recipient    string `json:"recipient"`
	MsgSizeBytes int    `json:"msg_size_bytes"`
	ID           string `json:"id"`
	Slot         uint64 `json:"slot,omitempty"` // 0: not known from the message
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
