package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/internal/freeport"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/lab/devnet/supervisor"
	"github.com/leiosnode/leiosnode/leios/protocolset"
)

// nodeProcess is a leiosnode process the benchmark started.
type nodeProcess struct {
	name     string
	cmd      *exec.Cmd
	httpAddr string
	logFile  string
	started  time.Time
	exited   chan struct{} // closed when the process has exited
	err      error         // its exit, once exited is closed
}

// startNode runs `exe run --config cfgPath`, its output to node.log in the
// config's directory, as the devnet starts its nodes: in their own process
// group, and on Linux killed with the bench should it die first.
func startNode(exe, name, cfgPath, httpAddr string) (*nodeProcess, error) {
	logFile := filepath.Join(filepath.Dir(cfgPath), "node.log")
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "run", "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = supervisor.ChildProcAttr()
	p := &nodeProcess{name: name, cmd: cmd, httpAddr: httpAddr, logFile: logFile, exited: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		_ = out.Close()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM and waits for the exit, killing the process after
// 20 s.
func (p *nodeProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// status is one GET /status of the node, or an error if it did not
// answer (or has exited).
func (p *nodeProcess) status(ctx context.Context, client *http.Client) (*apitypes.Status, error) {
	var st apitypes.Status
	if err := p.get(ctx, client, "/status", func(body io.Reader) error { return json.NewDecoder(body).Decode(&st) }); err != nil {
		return nil, err
	}
	return &st, nil
}

// requestTimeout bounds one request to a node's HTTP API. It only catches
// a node that hangs: a node serving dozens of hoarders on a machine busy
// with other work answers late, and a late answer is still a sample.
const requestTimeout = time.Minute

// sourceStart bounds a source's start, from its process to serving the
// chain's tip: opening a copy of the databases, which a busy machine does
// slowly, never for minutes.
const sourceStart = 5 * time.Minute

// get is one GET of path from the node's HTTP API, its body handed to
// read; an error if the node did not answer 200 within requestTimeout (or
// has exited).
func (p *nodeProcess) get(ctx context.Context, client *http.Client, path string, read func(body io.Reader) error) error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%v); its log is %s", p.name, p.err, p.logFile)
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.httpAddr+path, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: GET %s: %s", p.name, path, resp.Status)
	}
	return read(resp.Body)
}

// multiaddr spells a loopback host:port as /ip4/127.0.0.1/tcp/PORT.
func multiaddr(hostPort string) string {
	_, port, _ := net.SplitHostPort(hostPort)
	return "/ip4/127.0.0.1/tcp/" + port
}

// syncSources are the devnet's three nodes, restarted as relays (no keys:
// they forge nothing) on the forged chain, with no peers of their own.
type syncSources struct {
	procs []*nodeProcess
	peers []string // each one's multiaddr with /p2p/, for a topology
}

// startSources gives node-1 and node-2 copies of node-0's databases, all
// copied before any node starts (a running node changes its files), and
// starts all three as relays; it returns once each serves the chain's tip.
func startSources(ctx context.Context, exe string, chain *syncChain, client *http.Client) (*syncSources, error) {
	cfgs := make([]*config.Config, len(chain.layout.Nodes))
	for i, n := range chain.layout.Nodes {
		cfg, err := config.Load(n.ConfigFile)
		if err != nil {
			return nil, err
		}
		cfgs[i] = cfg
		if i == 0 {
			continue
		}
		fromChain, fromLeios := nodeDatabases(cfgs[0])
		toChain, toLeios := nodeDatabases(cfg)
		if err := copyDir(fromChain, toChain); err != nil {
			return nil, err
		}
		if err := copyDir(fromLeios, toLeios); err != nil {
			return nil, err
		}
	}
	s := &syncSources{}
	for i, n := range chain.layout.Nodes {
		relay := *cfgs[i]
		relay.TopologyFile, relay.IssuerKeyFile, relay.VRFKeyFile, relay.BLSKeyFile = "", "", "", ""
		relayFile := filepath.Join(n.Dir, "relay.json")
		if err := config.WriteJSON(relayFile, relay); err != nil {
			s.stop()
			return nil, err
		}
		p, err := startNode(exe, n.Name, relayFile, relay.HTTPAddr)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.procs = append(s.procs, p)
		s.peers = append(s.peers, n.ListenAddr+"/p2p/"+n.PeerID.String())
	}
	for _, p := range s.procs {
		if err := awaitTip(ctx, p, client, chain, sourceStart); err != nil {
			s.stop()
			return nil, fmt.Errorf("source %s: %w", p.name, err)
		}
	}
	return s, nil
}

func (s *syncSources) stop() {
	for _, p := range s.procs {
		p.stop()
	}
}

// awaitTip waits until the node's tip is the chain's.
func awaitTip(ctx context.Context, p *nodeProcess, client *http.Client, chain *syncChain, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		st, err := p.status(ctx, client)
		if err == nil && st.Tip.Hash == chain.tip.Point.Hash.String() {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("its tip is #%d, the chain's #%d", st.Tip.BlockNumber, chain.tip.BlockNumber)
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.exited:
			return fmt.Errorf("exited (%v); its log is %s", p.err, p.logFile)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("not at the chain's tip after %v: %w", timeout, last)
}

// syncFrom starts a fresh relay whose topology is the first peers
// sources, and polls its /status every pollInterval until its tip is the
// chain's; then it stops the node and counts the certified closures it
// kept. The curve is its tip over time from the first answer; the
// optional CPU profile covers the first profileFor of the sync.
func syncFrom(ctx context.Context, exe string, chain *syncChain, sources *syncSources, peers int, protocols protocolset.Set, dir string, client *http.Client, timeout, profileFor time.Duration, profileFile string) (*syncRun, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	nodeKey := filepath.Join(dir, "node.skey")
	if _, err := keys.GenerateKeyFiles(keys.Node, nodeKey, ""); err != nil {
		return nil, err
	}
	addrs, err := freeport.Addrs(2)
	if err != nil {
		return nil, err
	}
	topology := filepath.Join(dir, "topology.json")
	if err := config.WriteJSON(topology, config.Topology{Peers: sources.peers[:peers]}); err != nil {
		return nil, err
	}
	cfg0, err := config.Load(chain.layout.Nodes[0].ConfigFile)
	if err != nil {
		return nil, err
	}
	cfgFile := filepath.Join(dir, "config.json")
	if err := config.WriteJSON(cfgFile, config.Config{
		GenesisFile: cfg0.GenesisFile, TopologyFile: topology, DatabasePath: filepath.Join(dir, "db"),
		ListenAddrs: []string{multiaddr(addrs[0])}, HTTPAddr: addrs[1], NodeKeyFile: nodeKey,
		Pprof:          true, // its CPU profile is what --cpu-profile keeps
		LeiosProtocols: protocols,
	}); err != nil {
		return nil, err
	}
	p, err := startNode(exe, fmt.Sprintf("sync-%d", peers), cfgFile, addrs[1])
	if err != nil {
		return nil, err
	}
	defer p.stop()

	run := &syncRun{Peers: peers, Protocols: protocols.String()}
	var up time.Time
	profiled := make(chan error, 1)
	deadline := time.Now().Add(timeout)
	for {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s not synced after %v (tip #%d of #%d); its log is %s",
				p.name, timeout, lastBlock(run), chain.tip.BlockNumber, p.logFile)
		}
		st, err := p.status(ctx, client)
		now := time.Now()
		switch {
		case err != nil && errors.Is(err, context.Canceled):
			return nil, err
		case err != nil:
			select {
			case <-p.exited:
				return nil, err
			default: // not up yet
			}
		default:
			if up.IsZero() {
				up = now
				run.StartupSeconds = up.Sub(p.started).Seconds()
				if profileFile != "" {
					go func() { profiled <- fetchProfile(ctx, client, p.httpAddr, profileFor, profileFile) }()
				}
			}
			run.Curve = append(run.Curve, syncSample{
				Seconds: now.Sub(up).Seconds(), Slot: st.Tip.Slot, Block: st.Tip.BlockNumber, Txs: st.TxsOnChain,
			})
			if st.Tip.Hash == chain.tip.Point.Hash.String() {
				run.Seconds = now.Sub(up).Seconds()
				run.LeiosFetchedMB = float64(st.Leios.FetchedBytes) / 1e6
				run.EBsWhole, run.BodiesByPoint = st.Leios.EBsFetchedWhole, st.Leios.BodiesFetchedByPoint
				if st.TxsOnChain != chain.stats.Txs {
					return nil, fmt.Errorf("%s synced %d txs, the chain holds %d", p.name, st.TxsOnChain, chain.stats.Txs)
				}
				if profileFile != "" {
					if err := <-profiled; err != nil {
						return nil, err
					}
				}
				p.stop()
				if run.CertifiedKept, err = certifiedKept(cfgFile); err != nil {
					return nil, fmt.Errorf("%s's databases: %w", p.name, err)
				}
				run.rates(chain.stats)
				return run, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// pollInterval is how often the syncing node's tip is read.
const pollInterval = 50 * time.Millisecond

func lastBlock(r *syncRun) uint64 {
	if len(r.Curve) == 0 {
		return 0
	}
	return r.Curve[len(r.Curve)-1].Block
}

// fetchProfile saves a CPU profile of the node over d.
func fetchProfile(ctx context.Context, client *http.Client, httpAddr string, d time.Duration, file string) error {
	seconds := max(1, int(d.Round(time.Second)/time.Second))
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", httpAddr, seconds), nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("CPU profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CPU profile: %s", resp.Status)
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := out.ReadFrom(resp.Body); err != nil {
		_ = out.Close()
		return fmt.Errorf("CPU profile: %w", err)
	}
	return out.Close()
}
