//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRefusedBeforeDatabases: a config, genesis or key the node cannot
// run with is refused in one line naming the file or setting, before
// anything is created on disk: the databasePath of each refused start does
// not exist afterwards.
func TestRunRefusedBeforeDatabases(t *testing.T) {
	dir, good := devnetNode(t, "--nodes", "2")
	nodeDir := filepath.Dir(good)
	var base, genesis map[string]any
	readJSON(t, good, &base)
	readJSON(t, filepath.Join(dir, "genesis.json"), &genesis)

	set := func(key string, v any) func(c, g map[string]any) {
		return func(c, _ map[string]any) { c[key] = v }
	}
	// setIn sets key of the genesis, or of its section ("leios",
	// "protocolParams"); a nil v deletes it.
	setIn := func(section, key string, v any) func(c, g map[string]any) {
		return func(_, g map[string]any) {
			m := g
			if section != "" {
				m = g[section].(map[string]any)
			}
			if v == nil {
				delete(m, key)
			} else {
				m[key] = v
			}
		}
	}
	otherVRF := filepath.Join(dir, "node-1", "vrf.skey")
	for _, r := range []struct {
		name string
		edit func(c, g map[string]any)
		want string
	}{
		{"VRF key of another pool", set("vrfSigningKeyFile", otherVRF), "vrfSigningKeyFile " + otherVRF + ": "},
		{"issuer key not in genesis", func(_, g map[string]any) { g["pools"] = g["pools"].([]any)[1:] },
			"issuerSigningKeyFile " + filepath.Join(nodeDir, "issuer.skey") + ": "},
		{"HTTP port out of range", set("httpAddr", "127.0.0.1:99999"), "httpAddr 127.0.0.1:99999"},
		{"negative tx cache", set("txCacheCapacity", -1), "txCacheCapacity"},
		{"no systemStart", setIn("", "systemStart", nil), "systemStart"},
		{"slot length of a day", setIn("", "slotLengthMs", 86_400_000), "slotLengthMs"},
		{"network id past 15", setIn("", "networkId", 16), "networkId"},
		{"negative clock skew", setIn("", "maxClockSkewMs", -1), "maxClockSkewMs"},
		{"negative RB body", setIn("leios", "rbMaxBodyBytes", -1), "leios.rbMaxBodyBytes"},
		{"no EB body", setIn("leios", "ebMaxBodyBytes", 0), "leios.ebMaxBodyBytes"},
		{"no EB closure", setIn("leios", "ebMaxClosureBytes", 0), "leios.ebMaxClosureBytes"},
		{"no EB txs", setIn("leios", "ebMaxTxs", 0), "leios.ebMaxTxs"},
		{"negative lHdr", setIn("leios", "lHdr", -1), "leios.lHdr"},
		{"no vote window", setIn("leios", "lVote", 0), "leios.lVote"},
		{"negative lDiff", setIn("leios", "lDiff", -1), "leios.lDiff"},
		{"negative cert gap", setIn("leios", "minCertGap", -1), "leios.minCertGap"},
		{"no tx size", setIn("protocolParams", "maxTxSize", 0), "protocolParams.maxTxSize"},
		{"tx size past 2^31", setIn("protocolParams", "maxTxSize", 1<<40), "protocolParams.maxTxSize"},
		{"fee beyond all ada", setIn("protocolParams", "minFeeB", uint64(1)<<62), "protocolParams.minFeeB"},
		{"deposit beyond all ada", setIn("protocolParams", "coinsPerUTxOByte", uint64(1)<<60), "protocolParams.coinsPerUTxOByte"},
		{"protocol network id past 15", setIn("protocolParams", "networkId", 16), "protocolParams.networkId"},
	} {
		t.Run(r.name, func(t *testing.T) {
			c, g := clone(t, base), clone(t, genesis)
			db := filepath.Join(t.TempDir(), "db")
			c["databasePath"] = db
			gPath := filepath.Join(t.TempDir(), "genesis.json")
			c["genesisFile"] = gPath
			r.edit(c, g)
			writeJSON(t, gPath, g)
			cfg := filepath.Join(nodeDir, "refused.json")
			writeJSON(t, cfg, c)
			stderr, code := runUnlessStarted(t, "run", "--config", cfg)
			checkOneErrorLine(t, stderr, code, r.want)
			if _, line, ok := strings.Cut(stderr, "Error: "); ok {
				t.Logf("the operator reads: %s", line)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("databasePath %s exists after the refused start (%v)", db, err)
			}
		})
	}
}

// TestRunRefusesSigningKeyReadableByOthers: each signing key file the node
// runs with — its node (libp2p), issuer (cold), VRF and BLS key — is refused
// at 0644, group and others may read it, in the one line that names the
// setting, the file, its mode and the chmod that fixes it, before anything
// is created on disk; at 0600, as genesis writes it, the node starts.
func TestRunRefusesSigningKeyReadableByOthers(t *testing.T) {
	_, cfgPath := devnetNode(t)
	nodeDir := filepath.Dir(cfgPath)
	var base map[string]any
	readJSON(t, cfgPath, &base)
	for _, r := range []struct {
		setting, file string
		mode          os.FileMode
		refused       bool
	}{
		{"nodeKeyFile", "node.skey", 0o644, true},
		{"nodeKeyFile", "node.skey", 0o600, false},
		{"issuerSigningKeyFile", "issuer.skey", 0o644, true},
		{"issuerSigningKeyFile", "issuer.skey", 0o600, false},
		{"vrfSigningKeyFile", "vrf.skey", 0o644, true},
		{"vrfSigningKeyFile", "vrf.skey", 0o600, false},
		{"blsSigningKeyFile", "bls.skey", 0o644, true},
		{"blsSigningKeyFile", "bls.skey", 0o600, false},
	} {
		t.Run(fmt.Sprintf("%s %04o", r.file, r.mode), func(t *testing.T) {
			key := filepath.Join(nodeDir, r.file)
			if err := os.Chmod(key, r.mode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(key, 0o600) })
			c := clone(t, base)
			db := filepath.Join(t.TempDir(), "db")
			c["databasePath"] = db
			cfg := filepath.Join(nodeDir, "keymode.json")
			writeJSON(t, cfg, c)
			stderr, code := runUnlessStarted(t, "run", "--config", cfg)
			if !r.refused {
				if !strings.Contains(stderr, "node running") {
					t.Errorf("%s at %04o: the node did not start (exit %d); stderr:\n%s", r.file, r.mode, code, stderr)
				}
				return
			}
			want := "Error: starting the node: config " + cfg + ": " + r.setting + ": " + key +
				": readable by group or others (mode 0644): a signing key must be private; run chmod 600 " + key
			checkOneErrorLine(t, stderr, code, want)
			if !strings.Contains("\n"+stderr, "\n"+want+"\n") {
				t.Errorf("the error line is not exactly\n%s\nstderr:\n%s", want, stderr)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("databasePath %s exists after the refused start (%v)", db, err)
			}
		})
	}
}

// runUnlessStarted runs the CLI as its own process, as runCLI does, but
// kills a node that says it runs: a start that should have been refused.
func runUnlessStarted(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := cliCommand(t, args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	for s := bufio.NewScanner(pipe); s.Scan(); {
		stderr.WriteString(s.Text() + "\n")
		if strings.Contains(s.Text(), "node running") {
			cmd.Process.Kill()
		}
	}
	cmd.Wait()
	return stderr.String(), cmd.ProcessState.ExitCode()
}
