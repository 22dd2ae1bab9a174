package report

import (
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/lab/load"
)

// Closures are grouped by the links from each EB's producer (the node that
// held it first); EBs outside the span are left out.
func TestClosuresByHops(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	span := load.Span{From: start.Add(10 * time.Second), To: start.Add(100 * time.Second)}
	r := loadRun{
		names: []string{"a", "b", "c"},
		// a line: a – b – c
		hops: [][]int{{0, 1, 2}, {1, 0, 1}, {2, 1, 0}},
		ebs: []EBDiffusion{
			{Forged: start.Add(20 * time.Second), ClosureMs: map[string]int64{"a": 5, "b": 900, "c": 2500}},
			{Forged: start.Add(40 * time.Second), ClosureMs: map[string]int64{"c": 3, "b": 1200}}, // a never held it
			{Forged: start.Add(5 * time.Second), ClosureMs: map[string]int64{"a": 1, "b": 10, "c": 20}},
		},
	}
	got := r.closuresByHops(span, 2000)
	if len(got) != 2 {
		t.Fatalf("groups %+v, want 1 and 2 hops", got)
	}
	one, two := got[0], got[1]
	if one.Hops != 1 || one.Pairs != 2 || one.Held != 2 || one.Within != 2 || *one.P50Ms != 1050 || *one.P95Ms != 1200 {
		t.Errorf("1 hop: %+v", one)
	}
	if two.Hops != 2 || two.Pairs != 2 || two.Held != 1 || two.Within != 0 || *two.P50Ms != 2500 {
		t.Errorf("2 hops: %+v", two)
	}
	if (loadRun{names: []string{"a"}}).closuresByHops(span, 2000) != nil {
		t.Error("closures by hops without hops")
	}
}
