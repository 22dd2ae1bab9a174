package apitypes

// What became of an EB on a chain (EBFate.Fate; the devnet report's
// notCertified counts FatePending beside the reasons).
const (
	FateCertified    = "certified"     // the next block certifies it
	FatePending      = "pending"       // its RB is the tip, or not yet on the chain
	FateNotCertified = "not certified" // see the Reason* constants
)

// Why an EB was not certified (EBFate.Reason, and the devnet report's
// notCertified). Only the block right after the announcing RB may certify
// its EB, at least MinCertGap slots later and with the votes of a quorum.
// A node says which from its own view (its vote, its leader's attempt);
// the devnet's report from every node's votes and the common chain — the
// same words either way. The order is the one they are told apart in: the
// first that holds is the reason.
const (
	// No RB on the chain announces the EB: a fork that lost, or a block
	// never adopted.
	ReasonOffChain = "announcing RB not on the chain"
	// Its pool announced two EBs in the slot: nodes vote on neither.
	ReasonEquivocation = "equivocating announcement"
	// The next block came within the certification gap (MinCertGap slots).
	ReasonTooEarly = "next RB came too early"
	// The closure does not apply on the ledger after the RB.
	ReasonInvalid = "invalid closure"
	// The whole closure was not held in the voting window (by the node,
	// or by a voter the report heard from), or not by the next leader.
	ReasonIncomplete = "closure incomplete"
	// The announcing RB became the tip (of the node, or of a voter the
	// report heard from) only after the voting window: a slot battle
	// resolved late, or a block adopted late.
	ReasonLateTip = "RB adopted after the voting window"
	// The next block's leader did not hold votes that certify the EB.
	ReasonNoQuorum = "no quorum at the next leader"
)

// Reasons are the Reason* constants, in the order they are told apart.
func Reasons() []string {
	return []string{ReasonOffChain, ReasonEquivocation, ReasonTooEarly, ReasonInvalid, ReasonIncomplete, ReasonLateTip, ReasonNoQuorum}
}

// What became of a committee member's vote on an EB (EBTimes.Vote).
const (
	VoteCast              = "voted"
	VoteClosureIncomplete = "closure incomplete in the voting window"
	VoteInvalidClosure    = "invalid closure"
	VoteEquivocation      = "equivocating announcement"
	VoteTipReplaced       = "its RB stopped being the tip before the vote"
	VoteTipAfterWindow    = "its RB became the tip after the voting window"
)

// What a leader found when it looked at its tip's EB as it forged
// (CertifyAttempt.Outcome).
const (
	CertifyCertified     = "certified"
	CertifyTooEarly      = "too early: the EB is younger than the certification gap"
	CertifyNoClosure     = "closure not held"
	CertifyNoQuorum      = "no quorum"
	CertifyInvalid       = "closure does not apply"
	CertifyNotCertifying = "votes do not certify"
	CertifyEquivocation  = "equivocating announcement"
)
