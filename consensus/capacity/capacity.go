package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leiosnode/leiosnode/consensus"
)

// The forge's accounting of block bodies (forge/txs.go): an RB body's head,
// and an EB body's head and the most one entry (a tx hash and its size)
// takes. The forge stops an EB at the body limit by these, not by the
// entries' exact encoding.
const (
	rbBodyHeadBytes  = 7
	ebBodyHeadBytes  = 5
	ebBodyEntryBytes = 39
)

// Formula is the capacity's formula, as the doc comment gives it.
const Formula = "capacity = (p_cert × EB txs + (1 − p_cert) × RB txs) / (slot length / f); " +
	"p_cert = (1 − f)^(minCertGap − 1); EB txs = min(ebMaxTxs, ⌊ebMaxClosureBytes / size⌋, ⌊(ebMaxBodyBytes − 5) / 39⌋); " +
	"RB txs = ⌊(rbMaxBodyBytes − 7) / size⌋"

// Params are the genesis' figures the model is computed from: its timing
// and its Leios limits, in slots and bytes.
//
// The Leios limits are its own fields, not consensus.LeiosParams embedded:
// that type's strict UnmarshalJSON would be promoted and refuse the
// report that holds a Params.
type Params struct {
	SlotLengthMs      int64   `json:"slotLengthMs"`
	ActiveSlotsCoeff  float64 `json:"activeSlotsCoeff"`
	RBMaxBodyBytes    int     `json:"rbMaxBodyBytes"`
	EBMaxBodyBytes    int     `json:"ebMaxBodyBytes"`
	EBMaxClosureBytes int     `json:"ebMaxClosureBytes"`
	EBMaxTxs          int     `json:"ebMaxTxs"`
	LHdr              int     `json:"lHdr"`
	LVote             int     `json:"lVote"`
	LDiff             int     `json:"lDiff"`
	MinCertGap        int     `json:"minCertGap"`
}

// NewParams are the model's inputs from a slot length, f and the Leios
// parameters.
func NewParams(slotLength time.Duration, f float64, l consensus.LeiosParams) Params {
	return Params{
		SlotLengthMs: slotLength.Milliseconds(), ActiveSlotsCoeff: f,
		RBMaxBodyBytes: l.RBMaxBodyBytes, EBMaxBodyBytes: l.EBMaxBodyBytes, EBMaxClosureBytes: l.EBMaxClosureBytes, EBMaxTxs: l.EBMaxTxs,
		LHdr: l.LHdr, LVote: l.LVote, LDiff: l.LDiff, MinCertGap: l.MinCertGap,
	}
}

// FromGenesis are the model's inputs from g.
func FromGenesis(g *consensus.Genesis) (Params, error) {
	f, err := g.ActiveSlots()
	if err != nil {
		return Params{}, fmt.Errorf("capacity: %w", err)
	}
	ff, _ := f.Float64()
	return NewParams(g.SlotLength(), ff, g.Leios), nil
}

// SlotLength is the slot's duration.
func (p Params) SlotLength() time.Duration { return time.Duration(p.SlotLengthMs) * time.Millisecond }

// Timing is the protocol time of these parameters, which derives the RB
// interval and p_cert as the node derives them.
func (p Params) Timing() consensus.Timing {
	return consensus.Timing{SlotLength: p.SlotLength(), F: p.ActiveSlotsCoeff, Leios: consensus.LeiosParams{
		RBMaxBodyBytes: p.RBMaxBodyBytes, EBMaxBodyBytes: p.EBMaxBodyBytes, EBMaxClosureBytes: p.EBMaxClosureBytes, EBMaxTxs: p.EBMaxTxs,
		LHdr: p.LHdr, LVote: p.LVote, LDiff: p.LDiff, MinCertGap: p.MinCertGap,
	}}
}

// MeanRBInterval is the mean time between RBs: slot length / f.
func (p Params) MeanRBInterval() time.Duration { return p.Timing().MeanRBInterval() }

// PCert is the probability that the RB after an RB comes late enough to
// certify the EB it announced: (1 − f)^(g − 1) for a gap of g ≥ 1 slots
// (the g − 1 slots after it have no leader); 1 for a gap of 0.
func (p Params) PCert() float64 { return p.Timing().CertProbability() }

// ClosureBudget is L_hdr + L_vote slots: the time from an EB's slot start
// within which a voter must hold its closure. The node's voting window
// closes one slot later, at the end of slot rb_slot + L_hdr + L_vote.
func (p Params) ClosureBudget() time.Duration {
	return time.Duration(p.LHdr+p.LVote) * p.SlotLength()
}

// check says what makes p unusable for the model, if anything.
func (p Params) check() error {
	switch {
	case p.SlotLengthMs <= 0:
		return fmt.Errorf("capacity: slot length %d ms must be positive", p.SlotLengthMs)
	case !(p.ActiveSlotsCoeff > 0 && p.ActiveSlotsCoeff <= 1):
		return fmt.Errorf("capacity: activeSlotsCoeff %g must be in (0, 1]", p.ActiveSlotsCoeff)
	case p.RBMaxBodyBytes <= 0 || p.EBMaxBodyBytes <= 0 || p.EBMaxClosureBytes <= 0 || p.EBMaxTxs <= 0:
		return fmt.Errorf("capacity: the Leios limits must be positive: %+v", p)
	case p.MinCertGap < 0:
		return fmt.Errorf("capacity: minCertGap %d must not be negative", p.MinCertGap)
	}
	return nil
}

// Model is the structural capacity and latency of a network at a mean tx
// size: what its chain carries when every RB body is full and every EB
// whose next RB comes late enough is certified — no vote missed, no fork.
// A run measures below it; by how much is what the reports show.
type Model struct {
	Params      Params  `json:"params"`
	MeanTxBytes float64 `json:"meanTxBytes"`
	Formula     string  `json:"formula"`
	// PCert is the probability that an EB's next RB may certify it.
	PCert           float64 `json:"pCert"`
	MeanRBIntervalS float64 `json:"meanRbIntervalS"`
	// EBTxs is how many txs of the mean size an EB holds, EBBoundBy the
	// limit that bounds it (ebMaxTxs, ebMaxClosureBytes or
	// ebMaxBodyBytes); RBTxs how many an RB body holds.
	EBTxs     int    `json:"ebTxs"`
	EBBoundBy string `json:"ebBoundBy"`
	RBTxs     int    `json:"rbTxs"`
	// TxsPerRB is the txs one RB puts on chain on average; TxPerSecond and
	// TxkBPerSecond the capacity (kB = 1,000 bytes).
	TxsPerRB      float64 `json:"txsPerRb"`
	TxPerSecond   float64 `json:"txPerSecond"`
	TxkBPerSecond float64 `json:"txkBPerSecond"`
	// ClosureBudgetMs is L_hdr + L_vote slots in ms (Params.ClosureBudget).
	ClosureBudgetMs int64        `json:"closureBudgetMs"`
	Latency         LatencyModel `json:"latency"`
}

// MaxEBTxs is the most txs an EB holds, whatever their size: ebMaxTxs, or
// the entries its body has room for if fewer (13,443 with the prototype's
// limits).
func (p Params) MaxEBTxs() int { return min(p.EBMaxTxs, p.maxBodyEntries()) }

// maxBodyEntries is how many (tx hash, size) entries the forge fits in an
// EB body.
func (p Params) maxBodyEntries() int {
	return max(p.EBMaxBodyBytes-ebBodyHeadBytes, 0) / ebBodyEntryBytes
}

// New is the model of p at a mean tx size of meanTxBytes.
func New(p Params, meanTxBytes float64) (Model, error) {
	if err := p.check(); err != nil {
		return Model{}, err
	}
	if !(meanTxBytes > 0) {
		return Model{}, fmt.Errorf("capacity: mean tx size %g bytes must be positive", meanTxBytes)
	}
	m := Model{
		Params: p, MeanTxBytes: meanTxBytes, Formula: Formula,
		PCert: p.PCert(), MeanRBIntervalS: p.MeanRBInterval().Seconds(),
		RBTxs:           int(float64(max(p.RBMaxBodyBytes-rbBodyHeadBytes, 0)) / meanTxBytes),
		ClosureBudgetMs: p.ClosureBudget().Milliseconds(),
	}
	m.EBTxs, m.EBBoundBy = p.EBMaxTxs, "ebMaxTxs"
	if n := int(float64(p.EBMaxClosureBytes) / meanTxBytes); n < m.EBTxs {
		m.EBTxs, m.EBBoundBy = n, "ebMaxClosureBytes"
	}
	if n := p.maxBodyEntries(); n < m.EBTxs {
		m.EBTxs, m.EBBoundBy = n, "ebMaxBodyBytes"
	}
	m.TxsPerRB = m.PCert*float64(m.EBTxs) + (1-m.PCert)*float64(m.RBTxs)
	m.TxPerSecond = m.TxsPerRB / m.MeanRBIntervalS
	m.TxkBPerSecond = m.TxPerSecond * meanTxBytes / 1000
	m.Latency = newLatencyModel(p)
	return m, nil
}

// String is the model in two lines: the figures, then the formula with
// them.
func (m Model) String() string {
	l := m.Latency
	return fmt.Sprintf("structural capacity %s tx/s (%s TxkB/s) at %s B/tx: one EB of %s txs (bound by %s) per RB, "+
		"certified with p_cert %.2f, else an RB body of %s txs; RB every %s; latency model p50 %s, p95 %s\n"+
		"  = (p_cert × EB txs + (1 − p_cert) × RB txs) / (slot / f) = (%.2f × %s + %.2f × %s) / (%s / %g); p_cert = (1 − f)^(minCertGap − 1) = %.2f^%d",
		Thousands(m.TxPerSecond), Thousands(m.TxkBPerSecond), Thousands(m.MeanTxBytes), Thousands(float64(m.EBTxs)), m.EBBoundBy,
		m.PCert, Thousands(float64(m.RBTxs)), Seconds(m.MeanRBIntervalS), Seconds(float64(l.P50Ms)/1000), Seconds(float64(l.P95Ms)/1000),
		m.PCert, Thousands(float64(m.EBTxs)), 1-m.PCert, Thousands(float64(m.RBTxs)), Seconds(m.Params.SlotLength().Seconds()), m.Params.ActiveSlotsCoeff,
		1-m.Params.ActiveSlotsCoeff, max(m.Params.MinCertGap, 1)-1)
}

// Seconds spells a time in seconds as the model's lines do: whole seconds
// from 10 s on, two significant digits below.
func Seconds(s float64) string {
	if s >= 10 {
		return fmt.Sprintf("%.0f s", s)
	}
	return strconv.FormatFloat(s, 'g', 2, 64) + " s"
}

// Thousands spells x rounded to a whole number, with a comma every three
// digits.
func Thousands(x float64) string {
	n := int64(math.Round(x))
	if n < 0 {
		return "-" + Thousands(-x)
	}
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
