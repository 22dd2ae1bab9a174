package forge

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/consensustest"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/mempool"
)

// fixture is one pool with all the stake, a funded address, a real chain
// database with the real ledger rules, and a real mempool.
type fixture struct {
	genesis   *consensus.Genesis
	validator *consensus.Validator
	chain     *chaindb.DB
	mempool   *mempool.Mempool
	forger    *Forger
	leios     *recordingLeios
	payer     ed25519.PrivateKey
	funds     ledger.TxIn
	fundsOut  ledger.TxOut
}

// With a whale, the pool holds a negligible share of the stake and f is
// tiny, so it (almost surely) never leads.
func newFixture(t *testing.T, withWhale bool, rbMaxBody int, configure ...func(*Options)) *fixture {
	t.Helper()
	pool := consensustest.NewPool("pool", 0)
	issuer, vrfKey, votingKey := pool.Issuer, pool.VRF, pool.Voting
	payer := ed25519.NewKeyFromSeed([]byte(strings.Repeat("p", 32)))
	addr := ledger.EnterpriseAddress(0, ledger.KeyHash(payer.Public().(ed25519.PublicKey)))
	g := consensustest.Genesis(pool) // with all the stake, the pool leads every slot
	g.SlotLengthMs = 100
	g.SecurityParam = 5
	g.InitialFunds = map[string]uint64{hex.EncodeToString(addr): 100_000_000_000}
	g.ProtocolParams = ledger.DefaultParams()
	if withWhale {
		g.ActiveSlotsCoeff = "0.000001"
		g.Pools = append(g.Pools, consensustest.NewPool("whale", 1).Entry(1_000_000_000))
	}
	validator, err := consensus.NewValidator(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	utxo, err := ledger.GenesisUTxO(g.InitialFunds)
	if err != nil {
		t.Fatal(err)
	}
	lx := newRecordingLeios()
	db, err := chaindb.Open(t.TempDir(), chaindb.Options{
		K:           g.SecurityParam,
		GenesisUTxO: utxo,
		// As the Leios pipeline applies blocks: a CertRB's certified
		// closure first.
		ApplyBlock: func(u ledger.UTxO, blk *block.Block, parent *block.Header, reapply bool) (*ledger.Diff, error) {
			if err := validator.ValidateCertification(blk, parent); err != nil {
				return nil, err
			}
			var txs [][]byte
			if p, ok := consensus.CertifiedPoint(blk, parent); ok {
				closure, held := lx.closures[p]
				if !held {
					return nil, fmt.Errorf("%w: closure of %s", chaindb.ErrNotReady, p)
				}
				for _, tx := range closure {
					txs = append(txs, tx.Bytes)
				}
			}
			for _, tx := range blk.Body.Txs {
				txs = append(txs, tx)
			}
			return ledger.ApplyTxs(g.ProtocolParams, u, blk.Header.Slot, txs, reapply)
		},
		ValidateBlock: validator.ValidateBlock,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mp, err := mempool.New(mempool.Options{TipLedger: db.TipUTxO, TipChanged: db.TipChanged})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mp.Close)
	opts := Options{
		Validator:      validator,
		Ledger:         db,
		Chain:          chainOf{db},
		IssuerKey:      issuer,
		VRFKey:         vrfKey,
		Mempool:        snapshotMempool{mp},
		IsInvalidBlock: func(err error) bool { return errors.Is(err, chaindb.ErrInvalidBlock) },
		RBMaxBodyBytes: rbMaxBody,
		Leios:          lx,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, c := range configure {
		c(&opts)
	}
	forger, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if !withWhale {
		if opts.Voter, err = validator.Committee().NewVoter(forger.issuer, votingKey); err != nil {
			t.Fatal(err)
		}
		forger.opts.Voter = opts.Voter
	}
	in := ledger.GenesisTxIn(addr)
	return &fixture{genesis: g, validator: validator, chain: db, mempool: mp, forger: forger, leios: lx,
		payer: payer, funds: in, fundsOut: utxo[in]}
}

// chainOf presents the chain database as the forge's Chain, as the node
// does.
type chainOf struct{ db *chaindb.DB }

func (c chainOf) AddBlock(blk *block.Block) (bool, error) {
	res, err := c.db.AddBlock(blk)
	return res.Adopted, err
}

// chainOfTxs builds n txs, each spending the previous one's only output.
func (f *fixture) chainOfTxs(t *testing.T, n int) []*ledger.Tx {
	t.Helper()
	in, out := f.funds, f.fundsOut
	var txs []*ledger.Tx
	for range n {
		body := ledger.TxBody{Inputs: []ledger.TxIn{in}, Outputs: []ledger.TxOut{out}}
		fee, err := body.MinFee(f.genesis.ProtocolParams, 1)
		if err != nil {
			t.Fatal(err)
		}
		body.Fee, body.Outputs[0].Coin = fee, out.Coin-fee
		tx, err := body.Build([]ed25519.PrivateKey{f.payer})
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
		in, out = ledger.TxIn{TxID: tx.ID(), Index: 0}, body.Outputs[0]
	}
	return txs
}

func TestForgedBlockCarriesMempoolTxs(t *testing.T) {
	f := newFixture(t, false, 0)
	txs := f.chainOfTxs(t, 5)
	for _, tx := range txs {
		if err := f.mempool.Add(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
	}
	blk, err := f.forger.ForgeSlot(1)
	if err != nil || blk == nil {
		t.Fatalf("forge: %v %v", blk, err)
	}
	if len(blk.Body.Txs) != len(txs) {
		t.Fatalf("block carries %d txs, want %d", len(blk.Body.Txs), len(txs))
	}
	if f.chain.Tip().Point != blk.Point() || f.forger.Adopted() != 1 {
		t.Fatal("the forged block was not adopted")
	}
	if err := f.validator.ValidateBlock(blk); err != nil {
		t.Fatalf("a forged block must pass the checks a peer runs: %v", err)
	}
	// The mempool's sync drops the txs the adopted block included.
	if _, err := f.mempool.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := f.mempool.Snapshot().Len(); n != 0 {
		t.Fatalf("%d txs left in the mempool after their block was adopted", n)
	}
}

func TestForgeRespectsBodyLimitAndStaleSnapshot(t *testing.T) {
	f := newFixture(t, false, 1000)
	txs := f.chainOfTxs(t, 8)
	for _, tx := range txs {
		if err := f.mempool.Add(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
	}
	first, err := f.forger.ForgeSlot(1)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(first.Body.Txs); n == 0 || n == len(txs) || len(first.Body.Bytes()) > 1000 {
		t.Fatalf("body of %d bytes with %d txs: the 1000-byte limit was not applied", len(first.Body.Bytes()), n)
	}
	// Without a sync the snapshot still holds the included txs: the next
	// block must skip them rather than be refused.
	second, err := f.forger.ForgeSlot(2)
	if err != nil {
		t.Fatalf("forging on a stale snapshot: %v", err)
	}
	if got := block.Hash(txs[len(first.Body.Txs)].Hash()); block.HashBytes(second.Body.Txs[0]) != got {
		t.Fatal("the second block does not continue where the first stopped")
	}
}

func TestNoBlockWhenNotLeaderOrTipNotOlder(t *testing.T) {
	f := newFixture(t, true, 0)
	for slot := uint64(1); slot <= 20; slot++ {
		if blk, err := f.forger.ForgeSlot(slot); blk != nil || err != nil {
			t.Fatalf("slot %d: a pool with negligible stake forged (%v, %v)", slot, blk, err)
		}
	}

	g := newFixture(t, false, 0)
	if _, err := g.forger.ForgeSlot(5); err != nil {
		t.Fatal(err)
	}
	if blk, err := g.forger.ForgeSlot(5); blk != nil || err != nil {
		t.Fatal("forged twice in one slot")
	}
	if blk, _ := g.forger.ForgeSlot(4); blk != nil {
		t.Fatal("forged on a tip from a later slot")
	}
}

// A forged block the chain judges invalid gives up its txs, so the next
// block is not built from them again; a block refused for another reason
// (the chain closing) keeps them.
func TestInvalidForgedBlockDropsItsTxs(t *testing.T) {
	for _, refusal := range []error{chaindb.ErrInvalidBlock, chaindb.ErrClosed} {
		f := newFixture(t, false, 0, func(o *Options) { o.Chain = refusingChain{refusal} })
		txs := f.chainOfTxs(t, 3)
		for _, tx := range txs {
			if err := f.mempool.Add(context.Background(), tx); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.forger.ForgeSlot(1); !errors.Is(err, refusal) {
			t.Fatalf("ForgeSlot = %v, want %v", err, refusal)
		}
		want := 0
		if refusal != chaindb.ErrInvalidBlock {
			want = len(txs)
		}
		if n := f.mempool.Snapshot().Len(); n != want {
			t.Fatalf("refused with %v: %d txs left in the mempool, want %d", refusal, n, want)
		}
	}
}

// refusingChain refuses every block with err.
type refusingChain struct{ err error }

func (c refusingChain) AddBlock(*block.Block) (bool, error) { return false, c.err }

func TestNewRefusesForeignKeys(t *testing.T) {
	f := newFixture(t, false, 0)
	other := consensustest.NewPool("other", 2)
	_, err := New(Options{Validator: f.validator, Ledger: f.chain, Chain: chainOf{f.chain}, IssuerKey: other.Issuer, VRFKey: other.VRF})
	if err == nil || !strings.Contains(err.Error(), "not a genesis pool") {
		t.Fatalf("a key that is no pool's: got %v", err)
	}
}

func TestRunForgesOnTheWallClock(t *testing.T) {
	f := newFixture(t, false, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 550*time.Millisecond)
	defer cancel()
	if err := f.forger.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.chain.Tip().BlockNumber; n < 3 {
		t.Fatalf("%d blocks in about 5 slots of a pool that leads every slot", n)
	}
}

// When the mempool holds more than the RB carries, the RB announces an EB of
// the next txs, and the EB is handed on only after the RB is on the chain.
func TestForgeAnnouncesEBOfTheNextTxs(t *testing.T) {
	f := newFixture(t, false, 1000, func(o *Options) {
		o.EBLimits = block.EBLimits{MaxBodyBytes: 1000, MaxClosureBytes: 600, MaxTxs: 3}
	})
	f.leios.chain = f.chain
	txs := f.chainOfTxs(t, 12)
	f.admit(t, txs...)
	blk, err := f.forger.ForgeSlot(1)
	if err != nil {
		t.Fatal(err)
	}
	got := f.leios.published
	if len(got) != 1 || f.forger.EBs() != 1 {
		t.Fatalf("%d EBs published", len(got))
	}
	p := got[0]
	if p.tip.Point != blk.Point() || p.rb.Hash() != blk.Hash() {
		t.Fatal("the EB was published before its RB was on the chain")
	}
	if a := blk.Header.Announcement; a == nil || a.EbHash != p.eb.Hash() || a.EbSize != p.eb.Size() {
		t.Fatal("the RB header does not announce the published EB")
	}
	nRB := len(blk.Body.Txs)
	if len(p.eb.Txs) != 3 || p.eb.ClosureSize() > 600 {
		t.Fatalf("EB of %d txs, %d bytes: limits not applied", len(p.eb.Txs), p.eb.ClosureSize())
	}
	for i, entry := range p.eb.Txs {
		want := txs[nRB+i]
		if entry.TxHash != block.Hash(want.Hash()) || p.closure[i].Hash != entry.TxHash || block.HashBytes(p.closure[i].Bytes) != entry.TxHash {
			t.Fatalf("EB tx %d is not the next tx after the RB's", i)
		}
	}
}

// An equivocating forger (the devnet's chaos) publishes a second header
// for the slot of each block announcing an EB: same issuer, slot, body and
// VRF proof, both signed, announcing another EB (one tx fewer); only the
// first is on its chain.
func TestEquivocateAnnouncesATwin(t *testing.T) {
	f := newFixture(t, false, 1000, func(o *Options) {
		o.EBLimits = block.EBLimits{MaxBodyBytes: 1000, MaxClosureBytes: 600, MaxTxs: 3}
		o.Equivocate = true
	})
	f.admit(t, f.chainOfTxs(t, 12)...)
	blk, err := f.forger.ForgeSlot(1)
	if err != nil {
		t.Fatal(err)
	}
	got := f.leios.published
	if len(got) != 2 {
		t.Fatalf("%d headers published, want the block's and its twin", len(got))
	}
	first, twin := got[0], got[1]
	if first.rb.Hash() != blk.Hash() || twin.rb.Hash() == blk.Hash() {
		t.Fatal("the first published header is not the block's, or the twin is")
	}
	if twin.rb.Slot != blk.Header.Slot || twin.rb.IssuerVKey != blk.Header.IssuerVKey || twin.rb.BodyHash != blk.Header.BodyHash ||
		twin.rb.VerifySignature() != nil {
		t.Fatal("the twin is not a signed header of the same slot, issuer and body")
	}
	if twin.eb.Hash() == first.eb.Hash() || len(twin.eb.Txs) != len(first.eb.Txs)-1 || twin.rb.Announcement.EbHash != twin.eb.Hash() {
		t.Fatalf("the twin announces EB %s of %d txs; the block's is %s of %d", twin.eb.Hash().Short(), len(twin.eb.Txs), first.eb.Hash().Short(), len(first.eb.Txs))
	}
	if tip := f.chain.Tip(); tip.Point != blk.Point() {
		t.Fatalf("the chain's tip is %s, want the block, not its twin", tip)
	}
}

func (f *fixture) admit(t *testing.T, txs ...*ledger.Tx) {
	t.Helper()
	for _, tx := range txs {
		if err := f.mempool.Add(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotMempool presents the mempool as the node does (node's
// forgeMempool): a snapshot's txs and the tip they were validated against.
type snapshotMempool struct{ *mempool.Mempool }

func (m snapshotMempool) Txs() (iter.Seq[*ledger.Tx], block.Tip) {
	s := m.Snapshot()
	return func(yield func(*ledger.Tx) bool) {
		for e := range s.All() {
			if !yield(e.Tx) {
				return
			}
		}
	}, s.Tip()
}

// recordingLeios is the Leios pipeline as the forge sees it, in memory:
// what the forge publishes is held (body and closure at once), votes are
// kept per RB, and what the tests set is what the forge reads.
type recordingLeios struct {
	chain       *chaindb.DB // the tip at publication, if set
	published   []published
	closures    map[block.Point][]block.HashedTx
	votes       map[block.Hash][]block.Vote
	equivocated map[uint64]bool // by slot
	outcomes    map[block.Point]string
	validated   map[block.Point]bool
	attempts    map[block.Point][]CertifyAttempt
	verified    map[block.Hash]bool // MarkVerified
}

type published struct {
	rb      *block.Header
	eb      *block.EBBody
	closure []block.HashedTx
	tip     block.Tip
}

func newRecordingLeios() *recordingLeios {
	return &recordingLeios{
		closures:    map[block.Point][]block.HashedTx{},
		votes:       map[block.Hash][]block.Vote{},
		equivocated: map[uint64]bool{},
		outcomes:    map[block.Point]string{},
		validated:   map[block.Point]bool{},
		attempts:    map[block.Point][]CertifyAttempt{},
		verified:    map[block.Hash]bool{},
	}
}

func (l *recordingLeios) Publish(rb *block.Header, eb *block.EBBody, closure []block.HashedTx) error {
	p := published{rb: rb, eb: eb, closure: closure}
	if l.chain != nil {
		p.tip = l.chain.Tip()
	}
	l.published = append(l.published, p)
	l.closures[block.Point{Slot: rb.Slot, Hash: eb.Hash()}] = closure
	return nil
}

// ClosureTxs decodes the closure held; a tx counts as verified once
// MarkVerified named it.
func (l *recordingLeios) ClosureTxs(p block.Point) ([]ledger.BatchTx, bool, error) {
	c, ok := l.closures[p]
	if !ok {
		return nil, false, nil
	}
	txs := make([]ledger.BatchTx, len(c))
	for i, h := range c {
		tx, err := ledger.DecodeTx(h.Bytes)
		if err != nil {
			return nil, false, err
		}
		txs[i] = ledger.BatchTx{Tx: tx, Verified: l.verified[h.Hash]}
	}
	return txs, true, nil
}

// ClosureChanged never fires: the tests call VoteSlot themselves.
func (l *recordingLeios) ClosureChanged() <-chan struct{} { return nil }

func (l *recordingLeios) MarkVerified(hashes []block.Hash) {
	for _, h := range hashes {
		l.verified[h] = true
	}
}

func (l *recordingLeios) Votes(rb block.Hash) []block.Vote { return l.votes[rb] }

func (l *recordingLeios) Vote(v block.Vote) error {
	l.votes[v.RbHash] = append(l.votes[v.RbHash], v)
	return nil
}

func (l *recordingLeios) Equivocated(slot uint64, _ block.Bytes32) bool { return l.equivocated[slot] }

func (l *recordingLeios) RecordVote(p block.Point, outcome string, _ time.Time) {
	l.outcomes[p] = outcome
}

func (l *recordingLeios) RecordValidated(p block.Point, _ time.Time) { l.validated[p] = true }

// LatestWindow has nothing judged: the tests forge at the full limits.
func (l *recordingLeios) LatestWindow(time.Time) (uint64, bool, bool) { return 0, false, false }

func (l *recordingLeios) RecordCertify(p block.Point, a CertifyAttempt) {
	l.attempts[p] = append(l.attempts[p], a)
}
