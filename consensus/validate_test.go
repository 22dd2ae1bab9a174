package consensus_test

import (
	"errors"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/consensustest"
)

// A network takes headers and certificates in its own encoding alone:
// block hashes depend on it, so the other's is refused (ErrWrongEncoding)
// before any other check; a CertRB's certificate is checked against its
// parent's announcement in either.
func TestValidateEncoding(t *testing.T) {
	pools := []consensustest.Pool{consensustest.NewPool("a", 1), consensustest.NewPool("b", 2)}
	for _, enc := range []block.Encoding{block.EncodingCIP, block.EncodingPrototype} {
		t.Run(enc.String(), func(t *testing.T) {
			g := consensustest.Genesis(pools...)
			g.Leios.Encoding = enc
			v := consensustest.Validator(t, g)
			other := block.EncodingPrototype
			if enc == other {
				other = block.EncodingCIP
			}
			announcement := &block.Announcement{EbHash: block.HashBytes([]byte("eb")), EbSize: 100}
			parent := pools[0].Header(v, block.HeaderBody{BlockNumber: 1, Slot: 1, Announcement: announcement})
			if parent.Encoding != enc {
				t.Fatalf("consensustest built a %s header", parent.Encoding)
			}
			if err := v.ValidateHeader(parent); err != nil {
				t.Fatal(err)
			}
			// The same header in the other encoding: signed, a leader's, refused.
			hb := parent.HeaderBody
			hb.Encoding = other
			if err := v.ValidateHeader(block.NewHeader(hb, pools[0].Issuer)); !errors.Is(err, consensus.ErrWrongEncoding) {
				t.Fatalf("a %s header: %v, want ErrWrongEncoding", other, err)
			}

			s, _ := block.SubjectOf(parent)
			var votes []block.Vote
			for _, p := range pools {
				voter, err := v.Committee().NewVoter(p.IssuerVKey(), p.Voting)
				if err != nil {
					t.Fatal(err)
				}
				votes = append(votes, voter.Vote(s))
			}
			cert, err := v.Committee().Certify(s, votes)
			if err != nil {
				t.Fatal(err)
			}
			certRB := func(c *block.Certificate) *block.Block {
				body := block.NewBody(nil, c)
				h := pools[1].Header(v, block.HeaderBody{BlockNumber: 2, Slot: 1 + uint64(g.Leios.MinCertGap), PrevHash: &s.RbHash,
					BodySize: uint64(len(body.Bytes())), BodyHash: body.Hash(), LeiosCertified: true})
				return block.NewBlock(h, body)
			}
			good := certRB(cert)
			back, err := block.DecodeBlock(good.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if err := v.ValidateBlock(back); err != nil {
				t.Fatal(err)
			}
			if err := v.ValidateCertification(back, parent); err != nil {
				t.Fatal(err)
			}
			wrong := *cert
			wrong.Encoding = other
			if err := v.ValidateBlock(certRB(&wrong)); !errors.Is(err, consensus.ErrWrongEncoding) {
				t.Fatalf("a %s certificate: %v, want ErrWrongEncoding", other, err)
			}
		})
	}
}
