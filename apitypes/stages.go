package apitypes

// Stage names a stage of an EB's way through a node, as GET /api/ebs, the
// devnet report's timeline and its live view name it.
type Stage string

// The stages, in the order an EB reaches them at a node.
const (
	StageAnnounced Stage = "announced" // its RB header, first seen
	StageBody      Stage = "body"      // its body, held
	StageClosure   Stage = "closure"   // every tx of its closure, held
	StageValidated Stage = "validated" // the closure checked on the ledger after its RB
	StageVoted     Stage = "voted"     // the node's vote, cast
)

// Stages are the stages in the order an EB reaches them.
func Stages() []Stage {
	return []Stage{StageAnnounced, StageBody, StageClosure, StageValidated, StageVoted}
}

// EBStages holds a T for each stage an EB reached, nil for one it did not:
// the times in EBTimes, their milliseconds after the slot start in
// StageMs, the report's percentiles over the nodes. The one declaration
// of the stages' fields, so that every view of them names the same ones.
type EBStages[T any] struct {
	Announced *T `json:"announced,omitempty"`
	Body      *T `json:"body,omitempty"`
	Closure   *T `json:"closure,omitempty"`
	Validated *T `json:"validated,omitempty"`
	Voted     *T `json:"voted,omitempty"`
}

// At is the stage's field of s: a pointer to it, to read or to set.
func (s *EBStages[T]) At(stage Stage) **T {
	switch stage {
	case StageAnnounced:
		return &s.Announced
	case StageBody:
		return &s.Body
	case StageClosure:
		return &s.Closure
	case StageValidated:
		return &s.Validated
	case StageVoted:
		return &s.Voted
	}
	panic("apitypes: no stage " + string(stage))
}
