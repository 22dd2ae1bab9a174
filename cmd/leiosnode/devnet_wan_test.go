package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// labTopology is a line of three pools in the simulators' format: a and
// c have no link, so b relays between them; every link at 2 MB/s.
const labTopology = `nodes:
  a:
    stake: 300
    location: [0.1, 0.1]
    producers:
      b: {latency-ms: 30, bandwidth-bytes-per-second: 2000000}
  b:
    stake: 200
    location: [0.2, 0.2]
    producers:
      a: {latency-ms: 30, bandwidth-bytes-per-second: 2000000}
      c: {latency-ms: 60, bandwidth-bytes-per-second: 2000000}
  c:
    stake: 100
    location: [0.3, 0.3]
    producers:
      b: {latency-ms: 60, bandwidth-bytes-per-second: 2000000}
`

// TestDevnetWAN runs three node processes (the test binary standing in
// for leiosnode) for about 20 s on an emulated WAN: a topology file of 30
// and 60 ms links, the devnet template's 100 ms slots, the firehose. What
// holds on any machine: blocks on every node's chain; the lab carried
// bytes each way of every link of the file and none between a and c; and
// its account finds every connection of every node through the lab.
func TestDevnetWAN(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a devnet for about 20 seconds")
	}
	topology := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(topology, []byte(labTopology), 0o644); err != nil {
		t.Fatal(err)
	}
	run := runDevnet(t, []string{"the pools are the 3 nodes of most stake of " + topology + ", with its stakes' proportions: node-0=a node-1=b node-2=c\n",
		"through 4 link proxies", "latency 30ms–60ms", "links: node-1: "},
		"--topology", topology, "--funded", "3", "--security-param", "3", "--duration", "20s", "--tx-rate", "20")
	out, r := run.out, run.report
	wantPeers := map[string]int{"node-0": 1, "node-1": 2, "node-2": 1}
	for _, n := range r.Nodes {
		if n.Tip.BlockNumber == 0 || !n.Up || n.Peers != wantPeers[n.Name] {
			t.Errorf("%s: up %v, tip %d, %d peers; want blocks and %d peers", n.Name, n.Up, n.Tip.BlockNumber, n.Peers, wantPeers[n.Name])
		}
	}
	links := r.Links
	if links == nil {
		t.Fatal("the report has no links section")
	}
	if !links.ThroughLab {
		t.Errorf("the lab's account finds bytes around it")
	}
	for _, v := range links.Nodes {
		if !v.ThroughLab || v.Connections == 0 || len(v.Bypassing) > 0 || v.NodeReceivedBytes == 0 {
			t.Errorf("%s: %+v", v.Name, v)
		}
		if !strings.Contains(out, "links: "+v.Line) {
			t.Errorf("the output lacks %s's verdict %q", v.Name, v.Line)
		}
		t.Logf("%s: the lab carried %d bytes out and %d in, the node counted %d and %d (×%.2f)", v.Name, v.LabSentBytes, v.LabReceivedBytes,
			v.NodeSentBytes, v.NodeReceivedBytes, float64(v.LabSentBytes+v.LabReceivedBytes)/float64(v.NodeSentBytes+v.NodeReceivedBytes))
	}
	directions := map[string]float64{}
	for _, l := range links.Links {
		directions[l.From+"→"+l.To] = l.LatencyMs
		if l.Bytes == 0 || l.BandwidthBytes != 2_000_000 {
			t.Errorf("link %s→%s: %d bytes at %d B/s; want bytes, at 2 MB/s", l.From, l.To, l.Bytes, l.BandwidthBytes)
		}
	}
	if want := map[string]float64{"node-0→node-1": 30, "node-1→node-0": 30, "node-1→node-2": 60, "node-2→node-1": 60}; len(directions) != len(want) {
		t.Errorf("links %v, want %v", directions, want)
	} else {
		for k, ms := range want {
			if directions[k] != ms {
				t.Errorf("link %s: %v ms, want %v", k, directions[k], ms)
			}
		}
	}
}

// TestDevnetLinkFlags: a bad link flag or topology file is one clear error
// before anything is written.
func TestDevnetLinkFlags(t *testing.T) {
	dir := t.TempDir()
	badTopology := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badTopology, []byte("nodes:\n  a: {stake: 1, producers: {b: {latency: 3}}}\n  b: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	goodTopology := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(goodTopology, []byte(labTopology), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--link-bandwidth", "100Mbps"}, `--link-bandwidth: bandwidth "100Mbps": want bytes per second`},
		{[]string{"--link-latency", "-4ms"}, "--link-latency -4ms: must not be negative"},
		{[]string{"--topology", badTopology}, "topology " + badTopology + ": line 2: field latency not found"},
		{[]string{"--topology", filepath.Join(dir, "missing.yaml")}, "topology: open "},
		{[]string{"--topology", goodTopology, "--nodes", "4"}, "has 3 nodes: cannot keep 4"},
	} {
		devnetDir := filepath.Join(dir, "devnet")
		_, err := execute(context.Background(), append([]string{"devnet", "--dir", devnetDir, "--duration", "1s"}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want one line saying %q", tt.args, err, tt.want)
		}
		if _, err := os.Stat(devnetDir); err == nil {
			t.Errorf("%q: the devnet was written", tt.args)
		}
	}
}
