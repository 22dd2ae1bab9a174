//go:build linux

package main

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leiosnode/leiosnode/api"
	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/internal/load"
)

// TestNetworkOnHosts lays out a network with genesis --hosts for three
// pools and a relay, adds a second relay with genesis add, each on a host
// of its own — a network namespace with one address, all five on one
// bridge — copies each node's directory alone to its "host", and runs each
// node there as its own process, as an operator would. The five must agree
// on a chain that grows, and each be connected to the other four: a
// relay's topology names the first pool only, and it finds the others
// through peer sharing.
func TestNetworkOnHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five nodes in network namespaces for about twenty seconds")
	}
	lab := newNetnsLab(t, 5)
	dir := t.TempDir()
	network := filepath.Join(dir, "network")
	var pools []string
	for i := range 3 {
		pools = append(pools, lab.addr(i)+":3001")
	}
	out, err := execute(context.Background(), "genesis", "--dir", network, "--funded", "0", "--start-delay", "2s",
		"--hosts", strings.Join(pools, ","), "--relays", "1", "--relay-hosts", lab.addr(3)+":3001")
	if err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	t.Logf("genesis:\n%s", out)
	if out, err = execute(context.Background(), "genesis", "add", "--dir", network, "--host", lab.addr(4)+":3001"); err != nil {
		t.Fatalf("genesis add: %v\n%s", err, out)
	}
	t.Logf("genesis add:\n%s", out)

	names := []string{"node-0", "node-1", "node-2", "relay-0", "relay-1"}
	ids := make([]string, len(names))
	for i, name := range names {
		host := filepath.Join(dir, fmt.Sprintf("host-%d", i))
		copyToHost(t, host, filepath.Join(network, name))
		config := filepath.Join(host, "config.json")
		ids[i] = peerIDOf(t, config)
		node := startNodeCommand(t, lab.command(t, i, "run", "--config", config))
		defer node.stop(t)
		// It says at once who it is and where the others reach it.
		if !node.await(t, "node started") {
			t.Fatalf("%s ended before it started:\n%s", name, node.stderr.String())
		}
		for _, want := range []string{"version=", "/ip4/" + lab.addr(i) + "/tcp/3001/p2p/" + ids[i], "http=" + lab.addr(i) + ":3002"} {
			if !strings.Contains(node.stderr.String(), want) {
				t.Errorf("%s's start lacks %q:\n%s", name, want, node.stderr.String())
			}
		}
	}

	// Every node's chain holds a block the others' hold too, and later one
	// three blocks higher; every node has the three others for peers.
	client := lab.httpClient()
	var first, last api.TipStatus
	var statuses []*nodeStatus
	deadline := time.Now().Add(40 * time.Second)
	for first.BlockNumber == 0 || last.BlockNumber < first.BlockNumber+3 || !fullMesh(statuses, ids) {
		if time.Now().After(deadline) {
			t.Fatalf("after 40 s: first common block %+v, last %+v, full mesh %v; statuses:\n%s",
				first, last, fullMesh(statuses, ids), printStatuses(statuses))
		}
		time.Sleep(500 * time.Millisecond)
		statuses = make([]*nodeStatus, len(names))
		for i := range names {
			var st nodeStatus
			if err := apiclient.GetStatus(context.Background(), client, fmt.Sprintf("http://%s:3002", lab.addr(i)), &st); err == nil {
				statuses[i] = &st
			}
		}
		if b, ok := commonBlock(statuses); ok && b.BlockNumber >= 2 {
			if first.BlockNumber == 0 {
				first = b
			}
			last = b
		}
	}
	t.Logf("the five agree on block #%d, then on #%d %s; the relay's status:\n%s", first.BlockNumber, last.BlockNumber, last.Hash, printStatuses(statuses[3:]))
}

// TestLoadOnHosts: on four hosts made with genesis --hosts (three pools
// and a relay added with genesis add), leiosnode load — from the lab's
// switch, as an operator's machine — sends txs through two pools' APIs
// beyond what RBs carry: its report says every tx is on chain, none lost,
// the relay's chain holds them, and status --ebs on the relay gives every
// EB its fate.
func TestLoadOnHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("loads four nodes in network namespaces for about a minute")
	}
	lab := newNetnsLab(t, 4)
	dir := t.TempDir()
	network := filepath.Join(dir, "network")
	pools := []string{lab.addr(0) + ":3001", lab.addr(1) + ":3001", lab.addr(2) + ":3001"}
	if out, err := execute(context.Background(), "genesis", "--dir", network, "--funded", "4", "--start-delay", "2s",
		"--hosts", strings.Join(pools, ",")); err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	if out, err := execute(context.Background(), "genesis", "add", "--dir", network, "--host", lab.addr(3)+":3001"); err != nil {
		t.Fatalf("genesis add: %v\n%s", err, out)
	}
	for i, name := range []string{"node-0", "node-1", "node-2", "relay-0"} {
		host := filepath.Join(dir, fmt.Sprintf("host-%d", i))
		copyToHost(t, host, filepath.Join(network, name))
		node := startNodeCommand(t, lab.command(t, i, "run", "--config", filepath.Join(host, "config.json")))
		defer node.stop(t)
	}
	keys, err := filepath.Glob(filepath.Join(network, "funds", "payment-*.skey"))
	if err != nil || len(keys) != 4 {
		t.Fatalf("funded keys %v, %v", keys, err)
	}
	reportFile := filepath.Join(dir, "load.json")
	args := []string{"load", "--node", fmt.Sprintf("http://%s:3002,http://%s:3002", lab.addr(0), lab.addr(1)),
		"--rate", "600", "--duration", "40s", "--report", reportFile}
	for _, k := range keys {
		args = append(args, "--skey", k)
	}
	out, err := lab.switchCommand(t, args...).CombinedOutput()
	t.Logf("load:\n%s", lastLines(string(out), 15))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var r load.Report
	readJSON(t, reportFile, &r)
	if r.Admitted == 0 || r.OnChain == 0 || r.Lost != 0 || len(r.Problems) != 0 {
		t.Errorf("load report: %d admitted, %d on chain, %d lost, problems %q", r.Admitted, r.OnChain, r.Lost, r.Problems)
	}
	var relay nodeStatus
	if err := apiclient.GetStatus(context.Background(), lab.httpClient(), fmt.Sprintf("http://%s:3002", lab.addr(3)), &relay); err != nil {
		t.Fatal(err)
	}
	if relay.TxsOnChain < r.OnChain {
		t.Errorf("the relay's chain holds %d txs; the load put %d on chain", relay.TxsOnChain, r.OnChain)
	}
	// Whether EBs are certified depends on how fast the shared cores
	// check closures within the voting window: said, not asserted (on an
	// idle machine 14 of them; under -race with a core busy, none).
	t.Logf("the relay: %d txs on chain, %d EBs certified", relay.TxsOnChain, relay.CertRBsOnChain)

	// The relay lists each EB's fate: certified by which block, or why not.
	ebs, err := lab.switchCommand(t, "status", "--ebs", "--node", fmt.Sprintf("http://%s:3002", lab.addr(3))).CombinedOutput()
	t.Logf("status --ebs on the relay:\n%s", lastLines(string(ebs), 12))
	if err != nil || !strings.Contains(string(ebs), "not certified") && !strings.Contains(string(ebs), "certified by #") {
		t.Errorf("status --ebs: %v", err)
	}
	for _, row := range strings.Split(strings.TrimSpace(string(ebs)), "\n")[1:] {
		if strings.HasSuffix(row, " -") {
			t.Errorf("an EB without a fate: %s", row)
		}
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// commonBlock is the highest block that every node lists among its recent
// blocks; false if some node did not answer or there is none.
func commonBlock(statuses []*nodeStatus) (api.TipStatus, bool) {
	var common []api.TipStatus
	for i, st := range statuses {
		if st == nil {
			return api.TipStatus{}, false
		}
		if i == 0 {
			common = slices.Clone(st.RecentBlocks)
			continue
		}
		common = slices.DeleteFunc(common, func(b api.TipStatus) bool { return !slices.Contains(st.RecentBlocks, b) })
	}
	if len(common) == 0 {
		return api.TipStatus{}, false
	}
	return slices.MaxFunc(common, func(a, b api.TipStatus) int { return int(a.BlockNumber) - int(b.BlockNumber) }), true
}

// fullMesh: node i's peers are all the nodes but itself.
func fullMesh(statuses []*nodeStatus, ids []string) bool {
	for i, st := range statuses {
		if st == nil {
			return false
		}
		var peers []string
		for _, p := range st.Peers {
			peers = append(peers, p.ID)
		}
		slices.Sort(peers)
		others := slices.Delete(slices.Clone(ids), i, i+1)
		slices.Sort(others)
		if !slices.Equal(peers, others) {
			return false
		}
	}
	return len(statuses) == len(ids)
}

func printStatuses(statuses []*nodeStatus) string {
	var b strings.Builder
	for _, st := range statuses {
		if st == nil {
			b.WriteString("(no answer)\n")
			continue
		}
		st.print(&b, time.Now())
	}
	return b.String()
}

// netnsLab is a few hosts on one LAN: a network namespace per host, each
// with an eth0 at lab.addr(i), and a switch namespace whose bridge joins
// them (and holds 10.77.0.254, from which the test reaches the hosts).
// Nothing of it is in the test's own namespace, so the lab neither sees
// nor disturbs the machine's network, nor another lab.
type netnsLab struct {
	sw    string   // the switch's namespace
	hosts []string // the hosts' namespaces
}

// newNetnsLab makes a lab of n hosts, removed when the test ends (failed or
// not). It skips the test without root or without the ip command.
func newNetnsLab(t *testing.T, n int) *netnsLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	prefix := fmt.Sprintf("leiosnode-test-%d", os.Getpid())
	lab := &netnsLab{sw: prefix + "-switch"}
	var made []string
	t.Cleanup(func() {
		for _, ns := range slices.Backward(made) {
			if out, err := exec.Command("ip", "netns", "delete", ns).CombinedOutput(); err != nil {
				t.Errorf("removing network namespace %s: %v\n%s", ns, err, out)
			}
		}
	})
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	addNetns := func(name string) {
		t.Helper()
		ip("netns", "add", name)
		made = append(made, name)
		ip("-n", name, "link", "set", "lo", "up")
	}
	addNetns(lab.sw)
	ip("-n", lab.sw, "link", "add", "br0", "type", "bridge")
	ip("-n", lab.sw, "addr", "add", "10.77.0.254/24", "dev", "br0")
	ip("-n", lab.sw, "link", "set", "br0", "up")
	for i := range n {
		host := fmt.Sprintf("%s-host%d", prefix, i)
		addNetns(host)
		lab.hosts = append(lab.hosts, host)
		port := fmt.Sprintf("port%d", i)
		ip("-n", lab.sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", host)
		ip("-n", lab.sw, "link", "set", port, "master", "br0", "up")
		ip("-n", host, "addr", "add", lab.addr(i)+"/24", "dev", "eth0")
		ip("-n", host, "link", "set", "eth0", "up")
	}
	return lab
}

// addr is host i's address.
func (lab *netnsLab) addr(i int) string { return fmt.Sprintf("10.77.0.%d", i+1) }

// command is the CLI with args, to run on host i.
func (lab *netnsLab) command(t *testing.T, i int, args ...string) *exec.Cmd {
	return lab.cli(t, lab.hosts[i], args...)
}

// switchCommand is the CLI with args, run in the switch's namespace: an
// operator's machine on the hosts' LAN.
func (lab *netnsLab) switchCommand(t *testing.T, args ...string) *exec.Cmd {
	return lab.cli(t, lab.sw, args...)
}

// cli is the CLI with args, to run in the namespace ns.
func (lab *netnsLab) cli(t *testing.T, ns string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// ip netns exec execs the command itself: its process is the CLI's.
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, exe}, args...)...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=cli")
	return cmd
}

// httpClient reaches the hosts from the switch's namespace.
func (lab *netnsLab) httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: lab.dialFromSwitch}}
}

// dialFromSwitch dials from the switch's namespace: a socket belongs to
// the namespace of the thread that makes it, so the dial runs on a thread
// of its own that enters the namespace and then goes back.
func (lab *netnsLab) dialFromSwitch(ctx context.Context, network, addr string) (net.Conn, error) {
	runtime.LockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer own.Close()
	sw, err := os.Open(filepath.Join("/run/netns", lab.sw))
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer sw.Close()
	if err := unix.Setns(int(sw.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("entering the lab's switch: %w", err)
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if backErr := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); backErr != nil {
		// The thread stays locked, so it ends with this goroutine
		// instead of running others in the lab's namespace.
		if conn != nil {
			conn.Close()
		}
		return nil, fmt.Errorf("leaving the lab's switch: %w", backErr)
	}
	runtime.UnlockOSThread()
	return conn, err
}

// copyToHost copies a node's directory to its host as cp -r or scp -r
// would, file modes kept: os.CopyFS alone would leave the signing keys
// readable by others, which the node refuses.
func copyToHost(t *testing.T, host, nodeDir string) {
	t.Helper()
	if err := os.CopyFS(host, os.DirFS(nodeDir)); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(nodeDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(nodeDir, path)
		if err != nil {
			return err
		}
		return os.Chmod(filepath.Join(host, rel), info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}
