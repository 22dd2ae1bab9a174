//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/lab/load"
)

// TestOperationsOnHosts runs the operations guide's "A testnet on several
// hosts" as an operator would, every sh and console block in the order
// written, so that a step the guide gets wrong fails here. Each host the
// blocks name is a network namespace at that address; the machine that
// builds, generates, copies, checks and loads is the lab's switch, its
// working directory a checkout. A block that starts a node runs on every
// host that was given a node's folder and runs none yet; then the test
// waits for what the guide promises: each node says who it is and where,
// the nodes find each other in a full mesh and agree on a chain that
// grows. A console block's commands must print the lines it shows, their
// figures aside; the load's report must account for every tx, and each
// EB listed must have a fate.
//
// What the lab has none of is stood in for: go build writes a script that
// runs this test binary as the CLI, scp copies into the host's home
// directory as scp does, and the testnet template's slots are 100 ms, not
// 1 s, so that the chain moves in seconds.
func TestOperationsOnHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the guide's testnet of five nodes in network namespaces for about two minutes")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the guide's blocks")
	}
	var blocks []docBlock
	for _, b := range sectionBlocks(t, operationsDoc, hostsSection) {
		switch b.info {
		case "sh", "bash", "console":
			blocks = append(blocks, b)
		case "text":
		default:
			t.Errorf("operations.md:%d: a block marked %q: mark it sh or console, to be run, or text", b.line, b.info)
		}
	}
	g := newGuideRun(t, newNetnsLab(t, blockHosts(blocks)))
	for _, b := range blocks {
		g.run(t, b)
	}
	g.stopNodes(t)
	for _, check := range []string{"nodes", "console", "load", "ebs"} {
		if g.checked[check] == 0 {
			t.Errorf("no block of the section gave the %s check anything to check", check)
		}
	}
}

const hostsSection = "## A testnet on several hosts"

var (
	// runNodeRe marks a block that runs a node: it runs on the hosts.
	runNodeRe = regexp.MustCompile(`\bleiosnode run\b`)
	loadRe    = regexp.MustCompile(`\bleiosnode load\b`)
	reportRe  = regexp.MustCompile(`--report[ =](\S+)`)
	ebsRe     = regexp.MustCompile(`\bleiosnode status --ebs\b`)
	ipv4Re    = regexp.MustCompile(`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`)
)

// blockHosts are the IPv4 addresses the blocks' commands name, in order.
func blockHosts(blocks []docBlock) []string {
	var hosts []string
	for _, b := range blocks {
		for _, c := range blockCommands(b) {
			hosts = append(hosts, ipv4Re.FindAllString(c.command, -1)...)
		}
	}
	slices.SortFunc(hosts, func(a, b string) int { return slices.Compare(net.ParseIP(a).To4(), net.ParseIP(b).To4()) })
	return slices.Compact(hosts)
}

// docCommand is a script of a block and, in a console block, the lines it
// is shown to print.
type docCommand struct {
	command string
	shown   []string
}

// blockCommands: an sh block is one script; a console block is a command
// per "$ " line (continued by lines ending in \), each followed by what it
// prints.
func blockCommands(b docBlock) []docCommand {
	if b.info != "console" {
		return []docCommand{{command: b.text}}
	}
	var commands []docCommand
	continued := false
	for _, line := range strings.Split(strings.TrimSuffix(b.text, "\n"), "\n") {
		switch {
		case continued:
			commands[len(commands)-1].command += "\n" + line
		case strings.HasPrefix(line, "$ "):
			commands = append(commands, docCommand{command: strings.TrimPrefix(line, "$ ")})
		case len(commands) > 0:
			commands[len(commands)-1].shown = append(commands[len(commands)-1].shown, line)
		}
		continued = len(commands) > 0 && strings.HasSuffix(line, `\`) && (continued || strings.HasPrefix(line, "$ "))
	}
	return commands
}

// guideRun is the guide's testnet as the blocks make it.
type guideRun struct {
	lab     *netnsLab
	dir     string   // the operator's working directory: a checkout
	bin     string   // the stand-ins for go and scp
	homes   []string // host i's home directory
	nodes   []*guideNode
	checked map[string]int // what the blocks gave the test to check
}

// guideNode is a node a block started on a host.
type guideNode struct {
	host int
	p    *nodeProcess
	id   string // its peer ID, from its node started line
	api  string // its HTTP API's base URL, from the same line
}

func newGuideRun(t *testing.T, lab *netnsLab) *guideRun {
	root := t.TempDir()
	g := &guideRun{lab: lab, dir: filepath.Join(root, "operator"), bin: filepath.Join(root, "bin"), checked: map[string]int{}}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	hostCases := ""
	for _, addr := range lab.addrs {
		home := filepath.Join(root, "hosts", addr)
		g.homes = append(g.homes, home)
		hostCases += fmt.Sprintf("  %s) home=%s ;;\n", addr, home)
		if err := os.MkdirAll(home, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{g.dir, g.bin, filepath.Join(g.dir, "configs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The checkout: the package go build builds, and the templates, the
	// testnet's with 100 ms slots.
	if err := os.Symlink(filepath.Join(repo, "cmd"), filepath.Join(g.dir, "cmd")); err != nil {
		t.Fatal(err)
	}
	templates, err := filepath.Glob(filepath.Join(repo, "configs", "*.json"))
	if err != nil || len(templates) == 0 {
		t.Fatalf("templates: %v, %v", templates, err)
	}
	for _, tmpl := range templates {
		b, err := os.ReadFile(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(tmpl) == "testnet.json" {
			b = fastTemplate(t, b)
		}
		if err := os.WriteFile(filepath.Join(g.dir, "configs", filepath.Base(tmpl)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeScript(t, filepath.Join(g.bin, "leiosnode.build"), fmt.Sprintf("#!/bin/sh\n%s=cli exec '%s' \"$@\"\n", asCLIEnv, exe))
	writeScript(t, filepath.Join(g.bin, "go"), `#!/bin/bash
# go build [-ldflags FLAGS] [-o OUT] ./cmd/leiosnode, as this test's binary
set -eu
[ "${1-}" = build ] || { echo "go: only go build stands in here, not: go $*" >&2; exit 2; }
shift
out=leiosnode pkg=
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    -ldflags) shift 2 ;;
    -*) echo "go build: flag $1 does not stand in here" >&2; exit 2 ;;
    *) pkg=$1; shift ;;
  esac
done
[ "$pkg" = ./cmd/leiosnode ] && [ -d "$pkg" ] || { echo "go build: no package $pkg in $PWD" >&2; exit 1; }
cp "$(dirname "$0")/leiosnode.build" "$out"
`)
	writeScript(t, filepath.Join(g.bin, "scp"), `#!/bin/bash
# scp [-r] SOURCE… HOST:[PATH], into the lab host's home directory
set -eu
r= sources=()
for a in "$@"; do
  case $a in
    -r) r=-r ;;
    -*) echo "scp: option $a does not stand in here" >&2; exit 2 ;;
    *) sources+=("$a") ;;
  esac
done
dest=${sources[-1]}; unset 'sources[-1]'
host=${dest%%:*} path=${dest#*:}
[ "$host" != "$dest" ] || { echo "scp: $dest is not HOST:PATH" >&2; exit 2; }
case $host in
`+hostCases+`  *) echo "ssh: connect to host $host port 22: No route to host" >&2; exit 255 ;;
esac
case $path in /*) echo "scp: $path: only paths in the home directory stand in here" >&2; exit 2 ;; esac
exec cp $r -- "${sources[@]}" "$home/$path"
`)
	return g
}

// fastTemplate is the template b with 100 ms slots.
func fastTemplate(t *testing.T, b []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var tmpl map[string]any
	if err := d.Decode(&tmpl); err != nil {
		t.Fatal(err)
	}
	tmpl["slotLengthMs"] = 100
	out, err := json.MarshalIndent(tmpl, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeScript(t *testing.T, path, script string) {
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// env is the test's environment for a shell whose home is home, with the
// stand-ins first on its path and then the system's directories only: a
// leiosnode is where the blocks put it.
func (g *guideRun) env(home string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, asCLIEnv+"=")
	})
	return append(env, "HOME="+home, "PATH="+g.bin+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
}

// run runs the block b where it runs and checks what it promises.
func (g *guideRun) run(t *testing.T, b docBlock) {
	where := fmt.Sprintf("operations.md:%d", b.line)
	if b.info != "console" && runNodeRe.MatchString(b.text) {
		g.startNodes(t, where, b.text)
		return
	}
	for _, c := range blockCommands(b) {
		out := g.operator(t, where, c.command)
		if b.info == "console" {
			g.compareShown(t, where, c, out)
		}
		switch {
		case loadRe.MatchString(c.command):
			g.checkLoad(t, where, c.command)
		case ebsRe.MatchString(c.command):
			g.checkEBs(t, where, out)
		}
	}
}

// operator runs script on the operator's machine and returns its stdout.
func (g *guideRun) operator(t *testing.T, where, script string) string {
	t.Helper()
	cmd := g.lab.shell(g.lab.sw, g.dir, g.env(g.dir), script)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(waittest.Hang):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = fmt.Errorf("still running after %v, a hang: %v", waittest.Hang, <-done)
	}
	t.Logf("%s, on the operator's machine:\n%s\n%s\n%s", where, strings.TrimSuffix(script, "\n"), lastLines(stdout.String(), 20), lastLines(stderr.String(), 10))
	if err != nil {
		t.Fatalf("%s: %v\n%s", where, err, stderr.String())
	}
	return stdout.String()
}

// startNodes runs script, a node's start, on every host that holds a
// node's folder and runs no node yet; each must say who it is and where,
// and then the running nodes must meet in a full mesh on a growing chain.
func (g *guideRun) startNodes(t *testing.T, where, script string) {
	t.Helper()
	started := 0
	for i, home := range g.homes {
		if slices.ContainsFunc(g.nodes, func(n *guideNode) bool { return n.host == i }) {
			continue
		}
		if folders, _ := filepath.Glob(filepath.Join(home, "*", "config.json")); len(folders) == 0 {
			continue
		}
		cmd := g.lab.shell(g.lab.hosts[i], home, g.env(home), script)
		t.Cleanup(func() {
			if cmd.Process != nil {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // only matters when the test fails half-way
			}
		})
		p := startNodeCommand(t, cmd)
		if !p.await(t, "node started") {
			t.Fatalf("%s on %s: the node ended before it started:\n%s", where, g.lab.addr(i), p.stderr.String())
		}
		line := p.stderr.String()[strings.LastIndex(strings.TrimSuffix(p.stderr.String(), "\n"), "\n")+1:]
		n := &guideNode{host: i, p: p, id: logField(line, "peerId"), api: "http://" + logField(line, "http")}
		for _, want := range []string{"version=", "/ip4/" + g.lab.addr(i) + "/tcp/3001/p2p/" + n.id, "http=" + g.lab.addr(i) + ":3002"} {
			if n.id == "" || !strings.Contains(line, want) {
				t.Errorf("%s on %s: the node started line lacks %q: %s", where, g.lab.addr(i), want, line)
			}
		}
		t.Logf("%s on %s: %s", where, g.lab.addr(i), line)
		g.nodes = append(g.nodes, n)
		started++
	}
	if started == 0 {
		t.Fatalf("%s: no host holds a node's folder that runs no node", where)
	}
	t.Logf("%s: started %d nodes", where, started)
	g.awaitNetwork(t, where)
	g.checked["nodes"]++
}

// logField is the value of key in a log line, "" without it.
func logField(line, key string) string {
	_, v, ok := strings.Cut(line, " "+key+"=")
	if !ok {
		return ""
	}
	v, _, _ = strings.Cut(v, " ")
	return v
}

// awaitNetwork waits until every running node is connected to every other
// and they agree on a block, and then on one two blocks higher.
func (g *guideRun) awaitNetwork(t *testing.T, where string) {
	t.Helper()
	ids := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		ids[i] = n.id
	}
	var first, last apitypes.TipStatus
	var statuses []*nodeStatus
	deadline := time.Now().Add(waittest.Hang)
	for first.BlockNumber == 0 || last.BlockNumber < first.BlockNumber+2 || !fullMesh(statuses, ids) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: after %v, a hang, first common block %+v, last %+v, full mesh %v; statuses:\n%s",
				where, waittest.Hang, first, last, fullMesh(statuses, ids), printStatuses(statuses))
		}
		time.Sleep(500 * time.Millisecond)
		statuses = g.statuses()
		if b, ok := commonBlock(statuses); ok && b.BlockNumber >= 2 {
			if first.BlockNumber == 0 {
				first = b
			}
			last = b
		}
	}
	t.Logf("%s: the %d nodes, in a full mesh, agree on block #%d, then on #%d", where, len(g.nodes), first.BlockNumber, last.BlockNumber)
}

// statuses are the running nodes' statuses, nil for one that did not answer.
func (g *guideRun) statuses() []*nodeStatus {
	client := g.lab.httpClient()
	statuses := make([]*nodeStatus, len(g.nodes))
	for i, n := range g.nodes {
		var st nodeStatus
		if err := apiclient.GetStatus(context.Background(), client, n.api, &st); err == nil {
			statuses[i] = &st
		}
	}
	return statuses
}

// compareShown: the command printed the lines the guide shows it print,
// each the same up to its first figure (a hash, a peer ID, a count), and
// the peers and forks listed under them aside. A tip the young test chain
// does not have yet (genesis, no block) stands for any.
func (g *guideRun) compareShown(t *testing.T, where string, c docCommand, out string) {
	t.Helper()
	shown, printed := shownLines(c.shown), shownLines(strings.Split(strings.TrimSuffix(out, "\n"), "\n"))
	ok := len(shown) == len(printed)
	for i := 0; ok && i < len(shown); i++ {
		p := printed[i]
		ok = p == shown[i] || strings.HasSuffix(p, " genesis (no block yet)") && strings.Fields(p)[0] == strings.Fields(shown[i])[0]
	}
	if !ok {
		t.Errorf("%s: %s printed what the guide does not show, its figures aside:\n%s\nthe guide shows:\n%s",
			where, c.command, strings.Join(printed, "\n"), strings.Join(shown, "\n"))
	}
	g.checked["console"]++
}

// shownLines are lines without their indented ones, each up to its first
// figure: a word with a digit, or an ellipsis.
func shownLines(lines []string) []string {
	var out []string
	for _, line := range lines {
		if line == "" || strings.HasPrefix(line, " ") {
			continue
		}
		var words []string
		for _, w := range strings.Fields(line) {
			if strings.ContainsAny(w, "0123456789#…") {
				break
			}
			words = append(words, w)
		}
		out = append(out, strings.Join(words, " "))
	}
	return out
}

// checkLoad: the load's report accounts for every tx it sent, loses none,
// and every node's chain comes to hold what it put on chain.
func (g *guideRun) checkLoad(t *testing.T, where, command string) {
	t.Helper()
	m := reportRe.FindStringSubmatch(command)
	if m == nil {
		t.Errorf("%s: the load writes no --report, from which the test reads what became of its txs", where)
		return
	}
	var r load.Report
	readJSON(t, filepath.Join(g.dir, m[1]), &r)
	if r.Admitted == 0 || r.OnChain == 0 || r.Lost != 0 || len(r.Problems) != 0 {
		t.Errorf("%s: load report: %d admitted, %d on chain, %d lost, problems %q", where, r.Admitted, r.OnChain, r.Lost, r.Problems)
	}
	if r.Submitted != r.Admitted+r.RejectedTxs+r.RefusedAtStop+r.UnansweredAtStop {
		t.Errorf("%s: %d submitted != %d admitted + %d rejected + %d refused + %d unanswered", where,
			r.Submitted, r.Admitted, r.RejectedTxs, r.RefusedAtStop, r.UnansweredAtStop)
	}
	deadline := time.Now().Add(waittest.Hang)
	for {
		behind := ""
		for i, st := range g.statuses() {
			if st == nil || st.TxsOnChain < r.OnChain {
				behind += fmt.Sprintf(" %s", g.lab.addr(g.nodes[i].host))
			}
		}
		if behind == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: after %v, a hang, the chains of%s hold fewer than the %d txs the load put on chain", where, waittest.Hang, behind, r.OnChain)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Whether EBs are certified depends on how fast the shared cores
	// check closures within the voting window: said, not asserted.
	if st := g.statuses()[0]; st != nil {
		t.Logf("%s: %d txs on chain, %d lost; %d EBs certified at the first node", where, r.OnChain, r.Lost, st.CertRBsOnChain)
	}
	g.checked["load"]++
}

// checkEBs: status --ebs gives every EB a fate.
func (g *guideRun) checkEBs(t *testing.T, where, out string) {
	t.Helper()
	if !strings.Contains(out, "not certified") && !strings.Contains(out, "certified by #") {
		t.Errorf("%s: status --ebs lists no EB's fate", where)
	}
	for _, row := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if strings.HasSuffix(row, " -") {
			t.Errorf("%s: an EB without a fate: %s", where, row)
		}
	}
	g.checked["ebs"]++
}

// stopNodes interrupts every node, as Ctrl-C in its terminal would, and
// checks that each stopped cleanly.
func (g *guideRun) stopNodes(t *testing.T) {
	t.Helper()
	for _, n := range g.nodes {
		syscall.Kill(-n.p.cmd.Process.Pid, syscall.SIGINT)
	}
	for _, n := range g.nodes {
		if stderr, code := n.p.exit(t); code != 0 {
			t.Errorf("the node on %s did not stop cleanly (exit %d):\n%s", g.lab.addr(n.host), code, lastLines(stderr, 20))
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
func commonBlock(statuses []*nodeStatus) (apitypes.TipStatus, bool) {
	var common []apitypes.TipStatus
	for i, st := range statuses {
		if st == nil {
			return apitypes.TipStatus{}, false
		}
		if i == 0 {
			common = slices.Clone(st.RecentBlocks)
			continue
		}
		common = slices.DeleteFunc(common, func(b apitypes.TipStatus) bool { return !slices.Contains(st.RecentBlocks, b) })
	}
	if len(common) == 0 {
		return apitypes.TipStatus{}, false
	}
	return slices.MaxFunc(common, func(a, b apitypes.TipStatus) int { return int(a.BlockNumber) - int(b.BlockNumber) }), true
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
// with an eth0 at its address, and a switch namespace whose bridge joins
// them (and holds the LAN's .254, from which the test reaches the hosts).
// Nothing of it is in the test's own namespace, so the lab neither sees
// nor disturbs the machine's network, nor another lab, whatever addresses
// it uses.
type netnsLab struct {
	sw    string   // the switch's namespace
	hosts []string // the hosts' namespaces
	addrs []string // the hosts' IPv4 addresses
}

// newNetnsLab makes a lab of hosts at addrs, all in one /24 without its
// .254, removed when the test ends (failed or not). It skips the test
// without root or without network namespaces.
func newNetnsLab(t *testing.T, addrs []string) *netnsLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	if out, err := exec.Command("ip", "netns", "list").CombinedOutput(); err != nil {
		t.Skipf("ip netns is not available: %v\n%s", err, out)
	}
	if len(addrs) == 0 {
		t.Fatal("a lab of no hosts")
	}
	lan := addrs[0][:strings.LastIndex(addrs[0], ".")+1]
	for _, a := range addrs {
		if ip := net.ParseIP(a).To4(); ip == nil || !strings.HasPrefix(a, lan) || ip[3] == 0 || ip[3] >= 254 {
			t.Fatalf("lab host %s: the hosts must be in one /24 (%s0/24), neither .0 nor .254 nor .255", a, lan)
		}
	}
	removeStaleNetns(t)
	prefix := fmt.Sprintf("%s%d", netnsPrefix, os.Getpid())
	lab := &netnsLab{sw: prefix + "-switch", addrs: addrs}
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
	ip("-n", lab.sw, "addr", "add", lan+"254/24", "dev", "br0")
	ip("-n", lab.sw, "link", "set", "br0", "up")
	for i := range addrs {
		host := fmt.Sprintf("%s-host%d", prefix, i)
		addNetns(host)
		lab.hosts = append(lab.hosts, host)
		port := fmt.Sprintf("port%d", i)
		ip("-n", lab.sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", host)
		ip("-n", lab.sw, "link", "set", port, "master", "br0", "up")
		ip("-n", host, "addr", "add", addrs[i]+"/24", "dev", "eth0")
		ip("-n", host, "link", "set", "eth0", "up")
	}
	return lab
}

// netnsPrefix begins the name of every network namespace a lab makes; the
// test process's pid follows it.
const netnsPrefix = "leiosnode-test-"

// removeStaleNetns deletes the namespaces of labs whose test process is
// gone: a test killed mid-run (a timeout, ^C) never ran its cleanup.
func removeStaleNetns(t *testing.T) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatalf("ip netns list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ") // "NAME (id: N)"
		pid, _, _ := strings.Cut(strings.TrimPrefix(name, netnsPrefix), "-")
		if _, err := strconv.Atoi(pid); err != nil || !strings.HasPrefix(name, netnsPrefix) {
			continue // not a lab's
		}
		if _, err := os.Stat(filepath.Join("/proc", pid)); !errors.Is(err, fs.ErrNotExist) {
			continue // its test still runs
		}
		if out, err := exec.Command("ip", "netns", "delete", name).CombinedOutput(); err != nil {
			t.Logf("removing the stale network namespace %s: %v\n%s", name, err, out)
		}
	}
}

// addr is host i's address.
func (lab *netnsLab) addr(i int) string { return lab.addrs[i] }

// shell is bash running script in the namespace ns, in dir, with env:
// in a process group of its own, so that what it started goes with it.
func (lab *netnsLab) shell(ns, dir string, env []string, script string) *exec.Cmd {
	// ip netns exec execs the command itself: its process is bash's.
	cmd := exec.Command("ip", "netns", "exec", ns, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
