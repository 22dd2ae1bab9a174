package leios

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"maps"
	"testing"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/ledger"
)

// funds are the genesis funds of one payer.
type funds struct {
	key  ed25519.PrivateKey
	addr []byte
	utxo ledger.MapUTxO
}

func newFunds(tb testing.TB) funds {
	tb.Helper()
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	addr := ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
	utxo, err := ledger.GenesisUTxO(map[string]uint64{hex.EncodeToString(addr): 1_000_000_000_000})
	if err != nil {
		tb.Fatal(err)
	}
	return funds{key: key, addr: addr, utxo: utxo}
}

// payments builds n txs, each spending the previous one's first output
// and paying pay lovelace to a second output, the rest less the fee to the
// first.
func (f funds) payments(tb fataler, n int, pay uint64) [][]byte {
	in := ledger.GenesisTxIn(f.addr)
	coin := f.utxo[in].Coin
	var txs [][]byte
	for range n {
		body := ledger.TxBody{Inputs: []ledger.TxIn{in}, Outputs: []ledger.TxOut{{Address: f.addr, Coin: coin - pay}, {Address: f.addr, Coin: pay}}}
		fee, err := body.MinFee(ledger.DefaultParams(), 1)
		if err != nil {
			tb.Fatal(err)
		}
		body.Fee, body.Outputs[0].Coin = fee, coin-fee-pay
		tx, err := body.Build([]ed25519.PrivateKey{f.key})
		if err != nil {
			tb.Fatal(err)
		}
		txs = append(txs, tx.Bytes())
		in, coin = ledger.TxIn{TxID: tx.ID(), Index: 0}, body.Outputs[0].Coin
	}
	return txs
}

// rb forges, with the net's issuer key, the block after prev (nil: the
// first) at slot, carrying txs, announcing ann and certifying with cert.
func (n *testNet) rb(prev *block.Header, slot uint64, txs [][]byte, ann *block.Announcement, cert *block.Certificate) *block.Block {
	raw := make([]block.RawCBOR, len(txs))
	for i, tx := range txs {
		raw[i] = tx
	}
	body := block.NewBody(raw, cert)
	hb := block.HeaderBody{BlockNumber: 1, Slot: slot, BodySize: uint64(len(body.Bytes())), BodyHash: body.Hash(),
		Announcement: ann, LeiosCertified: cert != nil, Encoding: n.validator.Leios().Encoding}
	copy(hb.IssuerVKey[:], n.issuer.Public().(ed25519.PublicKey))
	if prev != nil {
		h := prev.Hash()
		hb.PrevHash, hb.BlockNumber = &h, prev.BlockNumber+1
	}
	return block.NewBlock(block.NewHeader(hb, n.issuer), body)
}

// certify is the certificate of the net's one vote for rb.
func (n *testNet) certify(tb fataler, rb *block.Block) *block.Certificate {
	s, _ := block.SubjectOf(rb.Header)
	cert, err := n.validator.Committee().Certify(s, []block.Vote{n.voter.Vote(s)})
	if err != nil {
		tb.Fatal(err)
	}
	return cert
}

// A CertRB that arrives before its closure is parked, off the selection;
// once the closure is in — here fetched from a peer, not validated — the
// chain reselects and adopts it, with the closure on its ledger.
func TestCertRBParkedUntilItsClosure(t *testing.T) {
	net := newTestNet(t)
	p, chain, eb, txs, announcing := announcedOnChain(t, net, newFunds(t), 10)
	minGap := uint64(net.validator.Leios().MinCertGap)
	early := net.rb(announcing.Header, 1+minGap-1, nil, nil, net.certify(t, announcing))
	if _, err := chain.AddBlock(early); !errors.Is(err, chaindb.ErrInvalidBlock) {
		t.Fatalf("a CertRB before the certification gap: %v", err)
	}
	certRB := net.rb(announcing.Header, 1+minGap, nil, nil, net.certify(t, announcing))
	if _, err := chain.AddBlock(certRB); err != nil {
		t.Fatalf("a CertRB whose closure is missing must be parked, not refused: %v", err)
	}
	if chain.Tip().Point != announcing.Point() {
		t.Fatal("a CertRB was selected without its closure")
	}
	deliverClosure(t, p, eb, txs)
	waittest.Until(t, "the parked CertRB adopted once its closure is complete", func() bool { return chain.Tip().Point == certRB.Point() })
	if got := chain.TxsOnChain(); got != uint64(len(txs)) {
		t.Fatalf("%d txs on chain, want the closure's %d", got, len(txs))
	}
}

// Applying a CertRB gives the ledger that applying the certified closure's
// txs one by one, fully validated, gives.
func TestCertRBAppliesItsClosure(t *testing.T) {
	net := newTestNet(t)
	f := newFunds(t)
	opts := testOptions(t)
	opts.Validator = net.validator
	p := openPipeline(t, opts)
	slot := uint64(0)
	rapid.Check(t, func(rt *rapid.T) {
		txs := f.payments(rt, rapid.IntRange(1, 20).Draw(rt, "txs"), rapid.Uint64Range(1_000_000, 5_000_000).Draw(rt, "pay"))
		eb := blocktest.EBOf(rt, txs).Body
		ann := eb.Announcement()
		slot += 100
		announcing := net.rb(nil, slot, nil, &ann, nil)
		pt := block.Point{Slot: slot, Hash: eb.Hash()}
		if err := p.insertAnnouncement(slot, announcing.Hash(), ann); err != nil {
			rt.Fatal(err)
		}
		if err := p.insertBody(pt, eb, nil); err != nil {
			rt.Fatal(err)
		}
		if err := p.insertTxs(pt, block.HashTxs(txs), false); err != nil {
			rt.Fatal(err)
		}
		certRB := net.rb(announcing.Header, slot+uint64(net.validator.Leios().MinCertGap), nil, nil, net.certify(rt, announcing))
		got, err := p.ApplyBlock(f.utxo, certRB, announcing.Header, false)
		if err != nil {
			rt.Fatal(err)
		}
		want := maps.Clone(f.utxo)
		for i, raw := range txs {
			tx, err := ledger.DecodeTx(raw)
			if err != nil {
				rt.Fatal(err)
			}
			d, err := ledger.Apply(ledger.DefaultParams(), want, certRB.Header.Slot, tx)
			if err != nil {
				rt.Fatalf("tx %d: %v", i, err)
			}
			for in := range d.Deletes {
				delete(want, in)
			}
			maps.Copy(want, d.Inserts)
		}
		after := maps.Clone(f.utxo)
		for in := range got.Deletes {
			delete(after, in)
		}
		maps.Copy(after, got.Inserts)
		same := maps.EqualFunc(after, want, func(a, b ledger.TxOut) bool { return a.Coin == b.Coin && string(a.Address) == string(b.Address) })
		if !same || got.Txs != len(txs) {
			rt.Fatalf("the CertRB's ledger differs from its txs applied one by one (%d txs counted)", got.Txs)
		}
	})
}

// announcedOnChain is a running pipeline over a chain of k whose first
// block announces an EB of five payments from f, as chain sync brings it:
// the pipeline, the chain, the EB's body and txs, its announcing block.
func announcedOnChain(t *testing.T, net *testNet, f funds, k int) (*Pipeline, *chaindb.DB, *block.EBBody, [][]byte, *block.Block) {
	t.Helper()
	opts := testOptions(t)
	opts.Validator = net.validator
	p := openPipeline(t, opts)
	chain, err := chaindb.Open(t.TempDir(), chaindb.Options{K: k, GenesisUTxO: f.utxo, ApplyBlock: p.ApplyBlock, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chain.Close() })
	if err := p.Attach(chain, nil); err != nil {
		t.Fatal(err)
	}
	runPipeline(t, p)

	txs := f.payments(t, 5, 1_000_000)
	eb := blocktest.EBOf(t, txs).Body
	ann := eb.Announcement()
	announcing := net.rb(nil, 1, nil, &ann, nil)
	if _, err := chain.AddBlock(announcing); err != nil {
		t.Fatal(err)
	}
	p.Announce(announcing.Header) // as chain sync does
	return p, chain, eb, txs, announcing
}

// deliverClosure stores the body and txs of the EB announcedOnChain
// announced, as a fetch from a peer would (not validated).
func deliverClosure(t *testing.T, p *Pipeline, eb *block.EBBody, txs [][]byte) {
	t.Helper()
	pt := block.Point{Slot: 1, Hash: eb.Hash()}
	if err := p.insertBody(pt, eb, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.insertTxs(pt, block.HashTxs(txs), false); err != nil {
		t.Fatal(err)
	}
}
