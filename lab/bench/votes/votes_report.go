package votes

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// The operations of leiosbench votes, as the table names them.
const (
	opEd25519Verify     = "ed25519 verify (reference)"
	opSignVote          = "sign one vote"
	opVerifyVote        = "verify one vote"
	opBatchVerify       = "batch-verify N votes"
	opAggregate         = "aggregate N signatures"
	opCertify           = "build a certificate"
	opVerifyCertificate = "verify a certificate"
)

type votesReport struct {
	Flags      votesFlags `json:"flags"`
	GOMAXPROCS int        `json:"gomaxprocs"`
	Rows       []votesRow `json:"rows"`
}

// votesRow is one timed operation.
type votesRow struct {
	Operation string        `json:"operation"`
	Signers   int           `json:"signers"` // N, 1 for the single-vote rows
	Runs      int           `json:"runs"`
	PerOp     time.Duration `json:"per_op_ns"`
}

func (r *votesReport) Write(w io.Writer) {
	var ref time.Duration
	for _, row := range r.Rows {
		if row.Operation == opEd25519Verify {
			ref = row.PerOp
		}
	}
	fmt.Fprintf(w, "BLS12-381 MinSig votes and certificates (blst), GOMAXPROCS %d; each operation repeated for ≥ %v\n",
		r.GOMAXPROCS, r.Flags.MinTime)
	fmt.Fprintln(w, "time of one operation; per signer = per op / N; × ed25519 = per op / one ed25519 verify")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tN\truns\tper op µs\tper op ns\tper signer µs\t× ed25519\t\n", len(opEd25519Verify), "operation")
	for _, row := range r.Rows {
		perSigner := "-"
		if row.Signers > 1 {
			perSigner = fmt.Sprintf("%.1f", micros(row.PerOp)/float64(row.Signers))
		}
		times := "-"
		if ref > 0 {
			times = fmt.Sprintf("%.1f", float64(row.PerOp)/float64(ref))
		}
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%.1f\t%d\t%s\t%s\t\n", len(opEd25519Verify),
			row.Operation, row.Signers, row.Runs, micros(row.PerOp), row.PerOp.Nanoseconds(), perSigner, times)
	}
	tw.Flush()
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
