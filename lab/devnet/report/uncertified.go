package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/leiosnode/leiosnode/lab/load"
)

// Uncertified are the EBs the common chain announced in the measured span
// whose next block came late enough to certify them and did not: what
// the nodes, not the leader schedule, left uncertified.
type Uncertified struct {
	// Measured says what was measured, in words.
	Measured string `json:"measured"`
	// ByFate counts them by the reason their fate gives (apitypes.Reasons).
	ByFate map[string]int `json:"byFate"`
	// WithRival counts those whose slot had another leader, whose RB
	// announced an EB of its own: the voters split between the two RBs,
	// each voting for the EB of the one it had selected.
	WithRival int `json:"withRival"`
}

// uncertifiedMeasured is Uncertified.Measured.
const uncertifiedMeasured = "the EBs the common chain announced in the measured span whose next block came minCertGap slots " +
	"or more after their RB and did not certify them, by the reason of their fate; with a rival: another RB of the same slot " +
	"announced an EB too (chain selection keeps the first of two chains of one length, so each voter votes for the EB of the " +
	"RB it met first)"

// uncertified finds the EBs of span that the chain could have certified
// and did not; nil when there are none or no span.
func (r loadRun) uncertified(span *load.Span, minCertGap int) *Uncertified {
	if span == nil {
		return nil
	}
	u := &Uncertified{Measured: uncertifiedMeasured, ByFate: map[string]int{}}
	gap := uint64(max(minCertGap, 0))
	for i, b := range r.common {
		if b.Announces == nil || i+1 == len(r.common) || !span.Contains(r.clock.SlotStart(b.Slot)) {
			continue
		}
		next := r.common[i+1]
		if next.Certifies != nil && *next.Certifies == *b.Announces || next.Slot-b.Slot < gap {
			continue
		}
		fate, rival := "fate unknown", false
		for _, eb := range r.ebs {
			switch {
			case eb.Slot != b.Slot:
			case eb.EbHash == b.Announces.EbHash:
				if eb.NotCertified != "" {
					fate = eb.NotCertified
				}
			default:
				rival = true
			}
		}
		u.ByFate[fate]++
		if rival {
			u.WithRival++
		}
	}
	if len(u.ByFate) == 0 {
		return nil
	}
	return u
}

// print writes the line of u.
func (u *Uncertified) print(out io.Writer) {
	total := 0
	var fates []string
	for _, fate := range slices.SortedFunc(maps.Keys(u.ByFate), func(a, b string) int {
		return cmp.Or(cmp.Compare(u.ByFate[b], u.ByFate[a]), cmp.Compare(a, b))
	}) {
		total += u.ByFate[fate]
		fates = append(fates, fmt.Sprintf("%s %d", fate, u.ByFate[fate]))
	}
	fmt.Fprintf(out, "  not certified though the next RB came late enough: %d (%s); %d with a rival RB in their slot, which split the votes\n",
		total, strings.Join(fates, ", "), u.WithRival)
}
