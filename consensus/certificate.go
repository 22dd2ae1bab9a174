package consensus

import (
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
)

// Certify builds the certificate of votes on s, in the network's encoding:
// the signers bitfield (SignersSize bytes, seat 0 in the most significant
// bit of byte 0) and the aggregate of their signatures, and in the CIP's
// encoding s's slot and EB hash. A seat voting twice counts once. The
// votes must have been verified (VerifyVote, VerifyVotes): a bad one is
// caught only by VerifyCertificate. Certify refuses votes for another RB,
// unknown seats, and signers whose stake is below QuorumStake.
func (c *Committee) Certify(s block.VoteSubject, votes []block.Vote) (*block.Certificate, error) {
	rbHash := s.RbHash
	cert := &block.Certificate{Signers: make([]byte, c.SignersSize()), Encoding: c.encoding}
	if c.encoding == block.EncodingCIP {
		cert.Slot, cert.EbHash = s.Slot, s.EbHash
	}
	sigs := make([]*bls.Signature, 0, len(votes))
	var stake uint64
	for i := range votes {
		v := &votes[i]
		if v.RbHash != rbHash {
			return nil, fmt.Errorf("%w: seat %d votes for RB %x, not %x", ErrOtherRB, v.VoterSeat, v.RbHash[:8], rbHash[:8])
		}
		seat, ok := c.Seat(v.VoterSeat)
		if !ok {
			return nil, fmt.Errorf("%w: seat %d of %d", ErrUnknownSeat, v.VoterSeat, len(c.seats))
		}
		if cert.HasSigner(int(v.VoterSeat)) {
			continue
		}
		sig, err := bls.SignatureFromBytes(v.Signature[:])
		if err != nil {
			return nil, fmt.Errorf("%w: seat %d: %w", ErrBadVoteSignature, v.VoterSeat, err)
		}
		cert.SetSigner(int(v.VoterSeat))
		sigs = append(sigs, sig)
		stake += seat.Stake
	}
	// QuorumStake is at least 1, so a quorum has at least one signature.
	if stake < c.quorumStake {
		return nil, fmt.Errorf("%w: %d votes hold %d of the %d needed", ErrNoQuorum, len(sigs), stake, c.quorumStake)
	}
	agg, err := bls.AggregateSignatures(sigs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCertificate, err)
	}
	cert.AggregateSignature = agg.Bytes()
	return cert, nil
}

// VerifyCertificate checks cert for the EB of s, in order of cost: it is
// in the network's encoding, and in the CIP's names s's slot and EB; the
// bitfield is exactly SignersSize bytes with no bit set beyond the last
// seat; the signers hold at least QuorumStake; the aggregate signature
// decodes and verifies against the sum of the signers' keys on the
// network's vote message for s, with one pairing check. Each failure wraps
// ErrWrongEncoding, ErrOtherEB, ErrMalformedSigners, ErrNoQuorum or
// ErrBadCertificate.
func (c *Committee) VerifyCertificate(s block.VoteSubject, cert *block.Certificate) error {
	if cert.Encoding != c.encoding {
		return fmt.Errorf("%w: a %s certificate on a %s network", ErrWrongEncoding, cert.Encoding, c.encoding)
	}
	if c.encoding == block.EncodingCIP && (cert.Slot != s.Slot || cert.EbHash != s.EbHash) {
		return fmt.Errorf("%w: it names EB %s at slot %d, the parent announced %s", ErrOtherEB, cert.EbHash.Short(), cert.Slot, s)
	}
	if len(cert.Signers) != c.SignersSize() {
		return fmt.Errorf("%w: %d bytes for %d seats, want %d", ErrMalformedSigners, len(cert.Signers), len(c.seats), c.SignersSize())
	}
	// Bits past the last seat would give one certificate several encodings.
	if pad := c.SignersSize()*8 - len(c.seats); pad > 0 && cert.Signers[len(cert.Signers)-1]&(1<<pad-1) != 0 {
		return fmt.Errorf("%w: a bit is set beyond seat %d", ErrMalformedSigners, len(c.seats)-1)
	}
	keys := make([]*bls.PublicKey, 0, len(c.seats))
	var stake uint64
	for seat := range c.seats {
		if cert.HasSigner(seat) {
			keys = append(keys, c.seats[seat].VotingKey)
			stake += c.seats[seat].Stake
		}
	}
	if stake < c.quorumStake {
		return fmt.Errorf("%w: %d signers hold %d of the %d needed", ErrNoQuorum, len(keys), stake, c.quorumStake)
	}
	sig, err := bls.SignatureFromBytes(cert.AggregateSignature[:])
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadCertificate, err)
	}
	if !bls.VerifyAggregate(keys, c.VoteMessage(s), sig) {
		return fmt.Errorf("%w: %d signers, %s", ErrBadCertificate, len(keys), s)
	}
	return nil
}
