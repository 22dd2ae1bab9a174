// Package votes is leiosbench votes: the cost of Leios voting with BLS
// signatures — sign, verify, batch-verify, aggregate, certify and verify a
// certificate — through the committee a node uses, beside one ed25519
// verify of the same message.
//
// Invariants: each operation runs until its minimum time has passed; every
// figure of the table is in the JSON report.
// It never builds a node or touches a store.
package votes

import (
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/lab/bench/output"
	"github.com/leiosnode/leiosnode/ledger"
)

// votesFlags are the flags of leiosbench votes.
type votesFlags struct {
	Signers []int         `json:"signers"`
	MinTime time.Duration `json:"min_time_ns"`
	JSON    string        `json:"-"`
}

// NewCommand is the votes command.
func NewCommand() *cobra.Command {
	var f votesFlags
	cmd := &cobra.Command{
		Use:   "votes",
		Short: "BLS votes and certificates: sign, verify, batch-verify, aggregate, certify, against one ed25519 verify",
		Long: `The cost of Leios voting with BLS12-381 MinSig signatures (package bls, on
blst), measured through the committee a node uses (package consensus):

  sign one vote              Voter.Vote: hash the vote message to G1, sign, compress
  verify one vote            Committee.VerifyVote: decode with the subgroup
                             check, one pairing check
  batch-verify N votes       Committee.VerifyVotes: N decodes, one randomized
                             multi-pairing (blst spreads it over GOMAXPROCS)
  aggregate N signatures     bls.AggregateSignatures of decoded signatures
  build a certificate        Committee.Certify from N votes: N decodes, the
                             bitfield and the aggregate
  verify a certificate       Committee.VerifyCertificate: bitfield, quorum,
                             aggregate of N keys, one pairing check

for committees of N seats of equal stake, every seat voting, beside one
crypto/ed25519 verify of the same 34-byte vote message as the reference.
Each operation is repeated until --min-time has passed; the table gives the
time of one operation (µs and ns), per signer where N signers take part,
and as a multiple of the ed25519 verify.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			report, err := runVotesBench(f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return output.Print(cmd, report, f.JSON)
		},
	}
	fs := cmd.Flags()
	fs.IntSliceVar(&f.Signers, "signers", []int{3, 100, 500}, "committee sizes N (all seats vote)")
	fs.DurationVar(&f.MinTime, "min-time", 500*time.Millisecond, "least time each operation is repeated for")
	fs.StringVar(&f.JSON, "json", "", "also write the report, every figure of the table, to this JSON file")
	return cmd
}

func (f *votesFlags) validate() error {
	if len(f.Signers) == 0 {
		return errors.New("--signers: give at least one committee size")
	}
	for _, n := range f.Signers {
		if n < 1 || n > consensus.MaxCommitteeSeats {
			return fmt.Errorf("--signers %d: want 1 to %d", n, consensus.MaxCommitteeSeats)
		}
	}
	if f.MinTime <= 0 {
		return errors.New("--min-time must be positive")
	}
	return nil
}

// votesCommittee is a committee of n seats of equal stake, with each
// seat's voter.
type votesCommittee struct {
	committee *consensus.Committee
	voters    []*consensus.Voter
}

func newVotesCommittee(n int) (*votesCommittee, error) {
	g := &consensus.Genesis{
		SystemStart:      time.Unix(0, 0),
		SlotLengthMs:     1000,
		ActiveSlotsCoeff: "0.05",
		SecurityParam:    10,
		EpochNonce:       strings.Repeat("00", 32),
		ProtocolParams:   ledger.DefaultParams(),
		Leios:            consensus.DefaultLeiosParams(),
	}
	g.Leios.CommitteeStakeFraction = "1" // every pool a seat: 0.99 would leave out 1 % of equal stakes
	issuers := make([]block.Bytes32, n)
	keys := make([]*bls.SecretKey, n)
	for i := range n {
		seed := make([]byte, ed25519.SeedSize)
		binary.BigEndian.PutUint64(seed[ed25519.SeedSize-8:], uint64(i)+1)
		issuers[i] = block.Bytes32(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
		key, err := bls.KeyFromSeed(seed)
		if err != nil {
			return nil, err
		}
		keys[i] = key
		pool := consensus.Pool{
			Name:       fmt.Sprintf("pool%d", i),
			IssuerVKey: hex.EncodeToString(issuers[i][:]),
			VRFVKey:    hex.EncodeToString(issuers[i][:]), // never used: nothing is forged
			Stake:      1_000_000,
		}
		pool.SetVotingKey(key.PublicKey(), key.ProvePossession())
		g.Pools = append(g.Pools, pool)
	}
	c, err := consensus.NewCommittee(g)
	if err != nil {
		return nil, err
	}
	vc := &votesCommittee{committee: c}
	for i := range n {
		v, err := c.NewVoter(issuers[i], keys[i])
		if err != nil {
			return nil, err
		}
		vc.voters = append(vc.voters, v)
	}
	return vc, nil
}

// votes returns every seat's vote on rb.
func (vc *votesCommittee) votes(rb block.VoteSubject) []block.Vote {
	vs := make([]block.Vote, len(vc.voters))
	for i, v := range vc.voters {
		vs[i] = v.Vote(rb)
	}
	return vs
}

// timeOp runs op until minTime has passed (at least 3 times, after one
// untimed warm-up) and returns the time per run and the runs. An error
// from op ends the measurement: what it measures is not what it claims.
func timeOp(minTime time.Duration, op func() error) (time.Duration, int, error) {
	if err := op(); err != nil {
		return 0, 0, err
	}
	runs := 0
	start := time.Now()
	for runs < 3 || time.Since(start) < minTime {
		if err := op(); err != nil {
			return 0, 0, err
		}
		runs++
	}
	return time.Since(start) / time.Duration(runs), runs, nil
}

func runVotesBench(f votesFlags, progress io.Writer) (*votesReport, error) {
	r := &votesReport{Flags: f, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	measure := func(operation string, signers int, op func() error) error {
		fmt.Fprintf(progress, "timing %s (%d signers)\n", operation, signers)
		perOp, runs, err := timeOp(f.MinTime, op)
		if err != nil {
			return fmt.Errorf("%s, %d signers: %w", operation, signers, err)
		}
		r.Rows = append(r.Rows, votesRow{Operation: operation, Signers: signers, Runs: runs, PerOp: perOp})
		return nil
	}
	rb := block.VoteSubject{RbHash: block.HashBytes([]byte("the RB announcing the EB")), Slot: 1234, EbHash: block.HashBytes([]byte("the EB"))}
	msg := consensus.DefaultLeiosParams().Encoding.VoteMessage(rb)

	// The reference: one ed25519 verify of the same message.
	edKey := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	edSig := ed25519.Sign(edKey, msg)
	edPub := edKey.Public().(ed25519.PublicKey)
	if err := measure(opEd25519Verify, 1, func() error {
		if !ed25519.Verify(edPub, msg, edSig) {
			return errors.New("does not verify")
		}
		return nil
	}); err != nil {
		return nil, err
	}

	one, err := newVotesCommittee(1)
	if err != nil {
		return nil, err
	}
	if err := measure(opSignVote, 1, func() error { one.voters[0].Vote(rb); return nil }); err != nil {
		return nil, err
	}
	vote := one.voters[0].Vote(rb)
	if err := measure(opVerifyVote, 1, func() error { return one.committee.VerifyVote(&vote, rb) }); err != nil {
		return nil, err
	}

	for _, n := range f.Signers {
		fmt.Fprintf(progress, "making a committee of %d seats\n", n)
		vc, err := newVotesCommittee(n)
		if err != nil {
			return nil, err
		}
		votes := vc.votes(rb)
		subjects := make([]block.VoteSubject, len(votes))
		for i := range subjects {
			subjects[i] = rb
		}
		sigs := make([]*bls.Signature, n)
		for i := range votes {
			if sigs[i], err = bls.SignatureFromBytes(votes[i].Signature[:]); err != nil {
				return nil, err
			}
		}
		cert, err := vc.committee.Certify(rb, votes)
		if err != nil {
			return nil, err
		}
		for _, m := range []struct {
			operation string
			op        func() error
		}{
			{opBatchVerify, func() error { return errors.Join(vc.committee.VerifyVotes(votes, subjects)...) }},
			{opAggregate, func() error { _, err := bls.AggregateSignatures(sigs); return err }},
			{opCertify, func() error { _, err := vc.committee.Certify(rb, votes); return err }},
			{opVerifyCertificate, func() error { return vc.committee.VerifyCertificate(rb, cert) }},
		} {
			if err := measure(m.operation, n, m.op); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}
