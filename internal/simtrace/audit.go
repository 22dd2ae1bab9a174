package simtrace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Audit is what a whole trace — every node's, merged in time order, as
// the devnet writes it — holds beyond its lines' shapes: what the format's
// readers tie together across lines, and where a trace would mislead them.
// The trace verifier counts Slot events to know the slot and finds an EB's
// RB, and a vote's EB, by id; the trace processor measures a receipt from
// its item's generation, found by id.
type Audit struct {
	Lines  int
	Counts map[string]int // events by type
	// Problems: a node's slot without its Slot event (after its first);
	// an item sent or received before it was generated; an EBGenerated
	// without its RB's RBGenerated before it; a vote, or an endorsement,
	// on an EB not generated before it.
	Problems []string
}

// maxProblems bounds the problems an Audit lists: the first tell the cause.
const maxProblems = 20

// AuditTrace reads a merged trace. Its lines must be the format's (Check);
// a line that is not JSON is an error.
func AuditTrace(r io.Reader) (*Audit, error) {
	a := &Audit{Counts: map[string]int{}}
	problem := func(format string, args ...any) {
		if len(a.Problems) < maxProblems {
			a.Problems = append(a.Problems, fmt.Sprintf(format, args...))
		}
	}
	type item struct{ kind, id string }
	generated := map[item]bool{}
	early := map[item]string{} // an item sent or received before it was generated: the first such event
	lastSlot := map[string]uint64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		a.Lines++
		var l struct {
			Time    float64 `json:"time_s"`
			Message struct {
				Type        string         `json:"type"`
				ID          string         `json:"id"`
				Node        string         `json:"node"`
				Slot        uint64         `json:"slot"`
				Votes       map[string]int `json:"votes"`
				Endorsement *Endorsement   `json:"endorsement"`
			} `json:"message"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return a, fmt.Errorf("line %d: %w", a.Lines, err)
		}
		m := l.Message
		a.Counts[m.Type]++
		switch kind, action := splitType(m.Type); action {
		case "Slot":
			if last, ok := lastSlot[m.Node]; ok && m.Slot != last+1 {
				problem("%s: Slot %d after Slot %d (line %d)", m.Node, m.Slot, last, a.Lines)
			}
			lastSlot[m.Node] = m.Slot
		case "Generated":
			it := item{kind, m.ID}
			generated[it] = true
			if first, ok := early[it]; ok {
				problem("%s %s: %s before its %s at %.3f s", kind, short(m.ID), first, m.Type, l.Time)
				delete(early, it)
			}
			if kind == "EB" && !generated[item{"RB", m.ID}] {
				problem("EBGenerated %s at %.3f s: no RBGenerated of that id before it", short(m.ID), l.Time)
			}
			for eb := range m.Votes {
				if !generated[item{"EB", eb}] {
					problem("VTBundleGenerated %s at %.3f s: a vote on %s, no EBGenerated before it", short(m.ID), l.Time, short(eb))
				}
			}
			if e := m.Endorsement; e != nil && !generated[item{"EB", e.EB.ID}] {
				problem("RBGenerated %s at %.3f s: endorses %s, no EBGenerated before it", short(m.ID), l.Time, short(e.EB.ID))
			}
		case "Sent", "Received":
			if it := (item{kind, m.ID}); !generated[it] {
				if _, ok := early[it]; !ok {
					early[it] = fmt.Sprintf("%s at %.3f s", m.Type, l.Time)
				}
			}
		}
	}
	return a, sc.Err()
}

// splitType splits an event type into its block kind and action:
// "EBSent" is ("EB", "Sent"); "Slot" and "Cpu" are ("", type).
func splitType(typ string) (kind, action string) {
	for _, action := range []string{"Generated", "Sent", "Received"} {
		if kind, ok := strings.CutSuffix(typ, action); ok && slices.Contains(blockKinds, kind) {
			return kind, action
		}
	}
	return "", typ
}

// short is an id's first characters, for a message.
func short(id string) string {
	if len(id) > 12 {
		return id[:12] + "…"
	}
	return id
}
