package output

import (
	"fmt"
	"io"
)

// Verdict is one target of a benchmark, judged against its run.
type Verdict struct {
	What     string `json:"what"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// WriteVerdicts prints the targets, met or not.
func WriteVerdicts(w io.Writer, vs []Verdict) {
	fmt.Fprintln(w, "\nTargets")
	for _, v := range vs {
		mark := "met"
		if !v.Met {
			mark = "NOT MET"
		}
		fmt.Fprintf(w, "  [%s] %s: %s\n", mark, v.What, v.Measured)
	}
}

// MetOrMissed is a target's mark in the tables that print it inline.
func MetOrMissed(met bool) string {
	if met {
		return "MET"
	}
	return "MISSED"
}
