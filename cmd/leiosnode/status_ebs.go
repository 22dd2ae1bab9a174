package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/leiosnode/leiosnode/apitypes"
)

// printEBs prints a node's recent EBs (GET /api/ebs), oldest first: each
// one's slot, hash, size, the stages it reached here in ms after its slot,
// this node's vote and the votes relayed for it, and its fate on the
// node's chain with the reason or the block that certified it.
func printEBs(w io.Writer, ebs []apitypes.EBTimes) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "slot\tEB\ttxs\tannounced\tbody\tclosure\tvalidated\tvoted\tvote\tvotes\tfate")
	ms := func(v *int64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%d ms", *v)
	}
	for _, e := range ebs {
		s := e.StageMs
		fmt.Fprintf(tw, "%d\t%.8s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", e.Slot, e.EbHash, e.Txs,
			ms(s.Announced), ms(s.Body), ms(s.Closure), ms(s.Validated), ms(s.Voted), orDash(e.Vote), e.Votes, fateText(e.Fate))
	}
	_ = tw.Flush()
}

// fateText is an EB's fate in a few words: certified by which block, or
// why not.
func fateText(f *apitypes.EBFate) string {
	switch {
	case f == nil:
		return "-"
	case f.CertifiedBy != nil:
		return fmt.Sprintf("%s by #%d (slot %d)", f.Fate, f.CertifiedBy.Number, f.CertifiedBy.Slot)
	case f.Reason != "":
		return f.Fate + ": " + f.Reason
	}
	return f.Fate
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
