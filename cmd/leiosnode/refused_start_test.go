//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/chaindb"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/internal/pebblestore"
	"github.com/leiosnode/leiosnode/internal/pebblestore/faulttest"
	"github.com/leiosnode/leiosnode/ledger"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// TestRefusedStartLeavesStores: a start refused for either database leaves
// both byte for byte as they were — the LeiosDB is not opened for writing
// before the chain passed its checks — and a database of another network
// is to be deleted alone while the other is of this one, the whole
// databasePath when both are not.
func TestRefusedStartLeavesStores(t *testing.T) {
	dir, cfgPath := devnetNode(t)
	startNode(t, cfgPath).stop(t)
	var base map[string]any
	readJSON(t, cfgPath, &base)
	ran := base["databasePath"].(string)
	if !filepath.IsAbs(ran) {
		ran = filepath.Join(filepath.Dir(cfgPath), ran)
	}
	genesisPath := filepath.Join(dir, "genesis.json")
	g, err := consensus.ReadGenesis(genesisPath)
	if err != nil {
		t.Fatal(err)
	}
	network := func(path string, g *consensus.Genesis) string {
		return fmt.Sprintf("genesis %x… (%s, system start %s)", g.FileHash[:8], path, g.SystemStart.UTC().Format(time.RFC3339))
	}
	other := pebblestore.Network{Genesis: [32]byte{9, 9, 9, 9, 9, 9, 9, 9}, About: "/srv/other/genesis.json"}
	const otherNetwork = "genesis 0909090909090909… (/srv/other/genesis.json)"

	for _, tt := range []struct {
		name string
		// damage changes the copy of the node's databases in db; it may
		// point the config c at another genesis.
		damage func(t *testing.T, db string, c map[string]any)
		want   func(db string, c map[string]any) string // the whole Error line
	}{
		{"chain without its manifest marker", func(t *testing.T, db string, _ map[string]any) {
			faulttest.RemoveManifestMarker(t, filepath.Join(db, "chain"))
		}, func(db string, _ map[string]any) string {
			chain := filepath.Join(db, "chain")
			return "Error: starting the node: chain database " + chain + ": corrupt: the directory holds files but no Pebble store (its marker.manifest file is missing); delete " + chain + " and start the node again: it resyncs the store from its peers"
		}},
		{"chain of another network", func(t *testing.T, db string, _ map[string]any) {
			replace(t, filepath.Join(db, "chain"), func(dir string) error {
				c, err := chaindb.Open(dir, chaindb.Options{Network: other, ApplyBlock: noBlocks})
				if err == nil {
					err = c.Close()
				}
				return err
			})
		}, func(db string, _ map[string]any) string {
			chain := filepath.Join(db, "chain")
			return "Error: starting the node: chain database " + chain + ": belongs to another network: it was created under " + otherNetwork +
				", this node runs " + network(genesisPath, g) + "; start it with that genesis, or delete " + chain + " (this store only) to join this network from its peers"
		}},
		{"LeiosDB of another network", func(t *testing.T, db string, _ map[string]any) {
			replace(t, filepath.Join(db, "leios"), func(dir string) error {
				l, err := leiosdb.Open(dir, leiosdb.Options{Network: other})
				if err == nil {
					err = l.Close()
				}
				return err
			})
		}, func(db string, _ map[string]any) string {
			leios := filepath.Join(db, "leios")
			return "Error: starting the node: LeiosDB " + leios + ": belongs to another network: it was created under " + otherNetwork +
				", this node runs " + network(genesisPath, g) + "; start it with that genesis, or delete " + leios + " (this store only) to join this network from its peers"
		}},
		{"both of another network", func(t *testing.T, db string, c map[string]any) {
			b, err := os.ReadFile(genesisPath)
			if err != nil {
				t.Fatal(err)
			}
			edited := filepath.Join(filepath.Dir(db), "genesis.json")
			if err := os.WriteFile(edited, append(b, '\n'), 0o644); err != nil { // another file: another network
				t.Fatal(err)
			}
			c["genesisFile"] = edited
		}, func(db string, c map[string]any) string {
			edited, err := consensus.ReadGenesis(c["genesisFile"].(string))
			if err != nil {
				panic(err)
			}
			chain := filepath.Join(db, "chain")
			return "Error: starting the node: chain database " + chain + ": belongs to another network: it was created under " + network(genesisPath, g) +
				", this node runs " + network(c["genesisFile"].(string), edited) + "; start it with that genesis, or delete the node's databasePath " + db +
				" (its LeiosDB is of that network too) to join this network from its peers"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			if err := os.CopyFS(db, os.DirFS(ran)); err != nil {
				t.Fatal(err)
			}
			c := clone(t, base)
			c["databasePath"] = db
			tt.damage(t, db, c)
			cfg := filepath.Join(filepath.Dir(cfgPath), "refused.json")
			writeJSON(t, cfg, c)
			chainBefore, leiosBefore := faulttest.Files(t, filepath.Join(db, "chain")), faulttest.Files(t, filepath.Join(db, "leios"))
			stderr, code := runUnlessStarted(t, "run", "--config", cfg)
			want := tt.want(db, c)
			checkOneErrorLine(t, stderr, code, want)
			if !strings.Contains(stderr, want+"\n") {
				t.Errorf("the error line is not exactly\n%s\nstderr:\n%s", want, stderr)
			}
			faulttest.Unchanged(t, filepath.Join(db, "chain"), chainBefore)
			faulttest.Unchanged(t, filepath.Join(db, "leios"), leiosBefore)
		})
	}
}

// replace makes dir a new store, written by create.
func replace(t *testing.T, dir string, create func(dir string) error) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := create(dir); err != nil {
		t.Fatal(err)
	}
}

// noBlocks is the ApplyBlock of a chain database that is only created.
func noBlocks(ledger.UTxO, *block.Block, *block.Header, bool) (*ledger.Diff, error) {
	return ledger.NewDiff(), nil
}

// TestRefusedStartCutManifest is the operator's report: a pool that ran,
// stopped, started again (its write-ahead logs flushed to tables, a new
// MANIFEST) and stopped, whose chain database's MANIFEST was then cut to
// half its size, is refused at its next start — and both databases are
// left as they were, where Pebble, opened for writing before the refusal,
// deleted every table and log the cut MANIFEST no longer named.
func TestRefusedStartCutManifest(t *testing.T) {
	dir, cfg := devnetNode(t)
	startNode(t, cfg).stop(t)
	startNode(t, cfg).stop(t)
	db := filepath.Join(dir, "node-0", "db")
	chain, leios := filepath.Join(db, "chain"), filepath.Join(db, "leios")
	faulttest.TruncateManifest(t, chain)
	chainBefore, leiosBefore := faulttest.Files(t, chain), faulttest.Files(t, leios)
	stderr, code := runUnlessStarted(t, "run", "--config", cfg)
	want := "Error: starting the node: chain database " + chain + ": corrupt: it holds no network stamp: it was written by an older leiosnode, was never completed, or lost its MANIFEST; delete " +
		chain + " and start the node again: it resyncs the store from its peers\n"
	if code != 1 || !strings.HasSuffix(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and the line:\n%s", code, stderr, want)
	}
	faulttest.Unchanged(t, chain, chainBefore)
	faulttest.Unchanged(t, leios, leiosBefore)
}
