package apitypes

import "time"

// EBTimes is one EB's way through a node, stage by stage, each first time
// it happened: GET /api/ebs, and the devnet report's stage latencies.
// Every stage is also given in StageMs as milliseconds after the EB's slot
// start (when its RB was forged), the clock the voting window runs on.
type EBTimes struct {
	Slot   uint64 `json:"slot"`
	EbHash string `json:"ebHash"`
	// RbHash is the announcing RB's, as first announced there.
	RbHash string `json:"rbHash,omitempty"`
	// Txs and ClosureBytes size the EB, once its body is held.
	Txs          int `json:"txs,omitempty"`
	ClosureBytes int `json:"closureBytes,omitempty"`
	// Deadline is the end of the voting window: the end of slot
	// Slot + LHdr + LVote, after which no vote on the EB may be cast.
	Deadline time.Time `json:"deadline"`

	// The stages (Stages names them, in order): its RB header first seen;
	// its body held; every tx of its closure held; the node's check of the
	// closure on the ledger after the announcing RB passed (a committee
	// member's last step before its vote); its vote cast.
	EBStages[time.Time]
	StageMs StageMs `json:"stageMs"`

	// Vote is what became of the node's vote on the EB (Vote*), if it
	// holds a committee seat; Votes counts the votes relayed there for its
	// RB.
	Vote  string `json:"vote,omitempty"`
	Votes int    `json:"votes"`
	// Certify is what the node saw when it led a slot on the announcing
	// RB: the votes it held and whether it certified the EB.
	Certify *CertifyAttempt `json:"certify,omitempty"`
	// Fate is what became of it on the node's selected chain, worked out
	// when the list is asked for.
	Fate *EBFate `json:"fate,omitempty"`
}

// StageMs are EBTimes' stages in milliseconds after the EB's slot start,
// a stage not reached absent, and the end of its voting window.
type StageMs struct {
	EBStages[int64]
	Deadline int64 `json:"deadline"`
}

// CertifyAttempt is a leader's look at an EB's votes when it forged on
// the RB that announced it, in EBTimes.
type CertifyAttempt struct {
	Slot    uint64    `json:"slot"` // of the block forged
	At      time.Time `json:"at"`
	AtMs    int64     `json:"atMs"` // after the EB's slot start
	Votes   int       `json:"votes"`
	Outcome string    `json:"outcome"` // Certify*
}

// EBFate is what became of an EB on a node's selected chain, worked out
// when asked, so a rollback changes it back.
type EBFate struct {
	Fate   string `json:"fate"`             // Fate*
	Reason string `json:"reason,omitempty"` // Reason*, when not certified
	// CertifiedBy is the CertRB, when certified.
	CertifiedBy *BlockRef `json:"certifiedBy,omitempty"`
}

// BlockRef names a block of the chain.
type BlockRef struct {
	Number uint64 `json:"number"`
	Slot   uint64 `json:"slot"`
	Hash   string `json:"hash"`
}
