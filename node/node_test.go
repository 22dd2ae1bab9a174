package node

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	p2pcrypto "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/consensustest"
	"github.com/leiosnode/leiosnode/internal/freeport"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/ledger"
)

// testNet writes a genesis with one pool per node (equal stake) and each
// node's keys, config and a full-mesh topology, as `leiosnode genesis` does.
// payerSeed derives the key of the one funded address of a test network.
var payerSeed = []byte(strings.Repeat("$", 32))

func payer() (ed25519.PrivateKey, []byte) {
	key := ed25519.NewKeyFromSeed(payerSeed)
	return key, ledger.EnterpriseAddress(0, ledger.KeyHash(key.Public().(ed25519.PublicKey)))
}

// payments is a chain of n signed txs from the payer's genesis funds, each
// spending the last one's output and paying it back less the fee.
func payments(t *testing.T, n int) []*ledger.Tx {
	t.Helper()
	key, addr := payer()
	in, coin := ledger.GenesisTxIn(addr), uint64(50_000_000_000)
	txs := make([]*ledger.Tx, 0, n)
	for range n {
		body := ledger.TxBody{Inputs: []ledger.TxIn{in}, Outputs: []ledger.TxOut{{Address: addr, Coin: coin - 200_000}}}
		fee, err := body.MinFee(ledger.DefaultParams(), 1)
		must(t, err)
		body.Fee, body.Outputs[0].Coin = fee, coin-fee
		tx, err := body.Build([]ed25519.PrivateKey{key})
		must(t, err)
		txs = append(txs, tx)
		in, coin = ledger.TxIn{TxID: tx.ID(), Index: 0}, coin-fee
	}
	return txs
}

func testNet(t *testing.T, nodes int, slotLength time.Duration, configure ...func(*consensus.Genesis)) []*config.Config {
	t.Helper()
	dir := t.TempDir()
	g := consensustest.Genesis()
	g.SystemStart = time.Now().Add(300 * time.Millisecond).UTC()
	g.SlotLengthMs = slotLength.Milliseconds()
	g.ActiveSlotsCoeff = "0.5"
	g.SecurityParam = 3
	g.MaxClockSkewMs = 500
	g.InitialFunds = map[string]uint64{}
	g.ProtocolParams = ledger.DefaultParams()
	for _, c := range configure {
		c(g)
	}
	_, payerAddr := payer()
	g.InitialFunds[hex.EncodeToString(payerAddr)] = 50_000_000_000
	var addrs []string
	var configs []*config.Config
	free, err := freeport.Addrs(2 * nodes) // an HTTP and a libp2p address each
	must(t, err)
	for i := range nodes {
		nodeDir := filepath.Join(dir, fmt.Sprintf("node-%d", i))
		must(t, os.MkdirAll(nodeDir, 0o755))
		cfg := &config.Config{
			GenesisFile:   filepath.Join(dir, "genesis.json"),
			TopologyFile:  filepath.Join(nodeDir, "topology.json"),
			DatabasePath:  filepath.Join(nodeDir, "db"),
			HTTPAddr:      free[2*i],
			NodeKeyFile:   filepath.Join(nodeDir, "node.skey"),
			IssuerKeyFile: filepath.Join(nodeDir, "issuer.skey"),
			VRFKeyFile:    filepath.Join(nodeDir, "vrf.skey"),
			// A small table: many nodes run in one test process.
			TxCacheCapacity: 1 << 14,
		}
		nodeKey := mustKey(t, cfg.NodeKeyFile, keys.Node)
		pool := consensustest.NewPool(fmt.Sprintf("node-%d", i), byte(i))
		cfg.BLSKeyFile = filepath.Join(nodeDir, "bls.skey")
		must(t, keys.WriteSigningKey(cfg.IssuerKeyFile, keys.StakePool, pool.Issuer))
		must(t, keys.WriteVRFSigningKey(cfg.VRFKeyFile, pool.VRF))
		must(t, keys.WriteBLSSigningKey(cfg.BLSKeyFile, pool.Voting))
		g.Pools = append(g.Pools, pool.Entry(1))
		_, port, _ := net.SplitHostPort(free[2*i+1])
		cfg.ListenAddrs = []string{"/ip4/127.0.0.1/tcp/" + port}
		pub, err := p2pcrypto.UnmarshalEd25519PublicKey(nodeKey.Public().(ed25519.PublicKey))
		must(t, err)
		id, err := peer.IDFromPublicKey(pub)
		must(t, err)
		addrs = append(addrs, cfg.ListenAddrs[0]+"/p2p/"+id.String())
		configs = append(configs, cfg)
	}
	must(t, consensus.WriteGenesis(filepath.Join(dir, "genesis.json"), g))
	for i, cfg := range configs {
		var topo config.Topology
		for j, a := range addrs {
			if j != i {
				topo.Peers = append(topo.Peers, a)
			}
		}
		must(t, config.WriteJSON(cfg.TopologyFile, topo))
	}
	return configs
}

// runNodes builds a node of each config and runs them until the test ends;
// a node that ends with an error fails the test.
func runNodes(t *testing.T, configs []*config.Config, options ...func(i int, o *Options)) (nodes []*Node, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g, gctx := errgroup.WithContext(ctx)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			must(t, g.Wait())
		})
	}
	t.Cleanup(stop) // before New: a node that fails to build stops those already running
	for i, cfg := range configs {
		opts := Options{Logger: quietLogger()}
		for _, o := range options {
			o(i, &opts)
		}
		n, err := New(cfg, opts)
		must(t, err)
		nodes = append(nodes, n)
		g.Go(func() error { return n.Run(gctx) })
	}
	return nodes, stop
}

func mustKey(t *testing.T, path string, role keys.Role) ed25519.PrivateKey {
	t.Helper()
	k, err := keys.GenerateSigningKey(nil)
	must(t, err)
	must(t, keys.WriteSigningKey(path, role, k))
	return k
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func getStatus(addr string) (apitypes.Status, error) {
	var s apitypes.Status
	resp, err := http.Get("http://" + addr + "/status")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// Two block producers on loopback forge, sync and agree on one chain whose
// immutable tip advances; cancelling Run shuts both down cleanly and a
// restarted node reopens its chain and catches up.
func TestTwoNodesAgreeAndRestart(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	configs := testNet(t, 2, 100*time.Millisecond)

	run := func(ctx context.Context, g *errgroup.Group, cfg *config.Config) {
		n, err := New(cfg, Options{Logger: quietLogger()})
		must(t, err)
		g.Go(func() error { return n.Run(ctx) })
	}
	waitAgree := func(minBlock uint64) apitypes.Status {
		t.Helper()
		var a apitypes.Status
		waittest.Until(t, fmt.Sprintf("the nodes agreeing on a chain of %d blocks", minBlock), func() bool {
			var b apitypes.Status
			var errA, errB error
			a, errA = getStatus(configs[0].HTTPAddr)
			b, errB = getStatus(configs[1].HTTPAddr)
			return errA == nil && errB == nil && a.Tip.BlockNumber >= minBlock && a.Tip == b.Tip && a.ImmutableTip.BlockNumber > 0
		})
		return a
	}

	ctx, cancel := context.WithCancel(context.Background())
	g, gctx := errgroup.WithContext(ctx)
	run(gctx, g, configs[0])
	run(gctx, g, configs[1])
	first := waitAgree(6)
	cancel()
	must(t, g.Wait())

	// Restart both from their databases: each reopens at its tip and the
	// chain grows on from there.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	g, gctx = errgroup.WithContext(ctx)
	run(gctx, g, configs[0])
	run(gctx, g, configs[1])
	second := waitAgree(first.Tip.BlockNumber + 3)
	if second.ImmutableTip.BlockNumber < first.ImmutableTip.BlockNumber {
		t.Fatalf("immutable tip went back from %d to %d", first.ImmutableTip.BlockNumber, second.ImmutableTip.BlockNumber)
	}
	cancel()
	must(t, g.Wait())
}

// TestPoolWithoutStakeWarned: a pool whose stake in the genesis is 0 never
// leads a slot; its node starts, and says so in a WARN line naming the
// pool, where it said nothing (or that it forges).
func TestPoolWithoutStakeWarned(t *testing.T) {
	configs := testNet(t, 3, 100*time.Millisecond)
	g, err := consensus.ReadGenesis(configs[0].GenesisFile)
	must(t, err)
	g.Pools[2].Stake = 0
	must(t, consensus.WriteGenesis(configs[0].GenesisFile, g))
	var log lockedBuffer
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	n, err := New(configs[2], Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{ReplaceAttr: noTime}))})
	if err != nil {
		t.Fatalf("a pool without stake: %v", err)
	}
	defer n.close()
	want := `level=WARN msg="this pool has no stake in the genesis: it will never lead a slot, so it will forge no block" pool=` +
		g.Pools[2].Name + " genesis=" + configs[2].GenesisFile + "\n"
	if !strings.Contains(log.String(), want) {
		t.Errorf("the node's log has no line\n%s\nlog:\n%s", want, log.String())
	}
}

// lockedBuffer is a log's output, written by any goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A pool whose stake is below the committee's truncation holds no seat:
// its node starts and forges all the same, with no vote to cast.
func TestSeatlessPoolForges(t *testing.T) {
	configs := testNet(t, 3, 100*time.Millisecond)
	g, err := consensus.ReadGenesis(configs[0].GenesisFile)
	must(t, err)
	g.Pools[0].Stake, g.Pools[1].Stake = 1000, 1000 // they cover σ_c = 0.99 of it
	must(t, consensus.WriteGenesis(configs[0].GenesisFile, g))
	n, err := New(configs[2], Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("a seatless pool's node: %v", err)
	}
	defer n.close()
	issuer, err := keys.ReadSigningKey(configs[2].IssuerKeyFile, keys.StakePool)
	must(t, err)
	if _, seated := n.validator.Committee().SeatOf(block.Bytes32(issuer.Public().(ed25519.PublicKey))); n.forger == nil || seated {
		t.Fatalf("forger %v, seated %v: want a forger without a seat", n.forger != nil, seated)
	}
}
