package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/multiformats/go-multiaddr"

	"github.com/leiosnode/leiosnode/internal/strictjson"
	"github.com/leiosnode/leiosnode/leios/protocolset"
)

// Config is one node's configuration file (config.json). Relative paths are
// resolved against the directory of the config file, into absolute ones.
type Config struct {
	// GenesisFile is the network's genesis.json.
	GenesisFile string `json:"genesisFile"`
	// TopologyFile lists the peers to keep connected to.
	TopologyFile string `json:"topologyFile"`
	// DatabasePath is the directory of the node's databases.
	DatabasePath string `json:"databasePath"`
	// ListenAddrs are libp2p multiaddrs, e.g. /ip4/127.0.0.1/tcp/3001.
	ListenAddrs []string `json:"listenAddrs"`
	// HTTPAddr serves /status, /metrics (and later the submit API);
	// empty = no HTTP server.
	HTTPAddr string `json:"httpAddr"`
	// NodeKeyFile is the ed25519 key that gives the node its peer ID.
	NodeKeyFile string `json:"nodeKeyFile"`
	// IssuerKeyFile and VRFKeyFile make the node a block producer for the
	// genesis pool with these keys; both empty = a relay.
	IssuerKeyFile string `json:"issuerSigningKeyFile,omitempty"`
	VRFKeyFile    string `json:"vrfSigningKeyFile,omitempty"`
	// BLSKeyFile is the producer's BLS voting key, the one its pool
	// registered in the genesis; empty = the node does not vote. Only a
	// block producer may have one.
	BLSKeyFile string `json:"blsSigningKeyFile,omitempty"`
	// TxCacheCapacity is the LeiosTxCache's table size in txs; 0 is the
	// default, sized for 128 full EBs (about 160 MiB).
	TxCacheCapacity int `json:"txCacheCapacity,omitempty"`
	// LogLevel is debug, info, warn or error (default info).
	LogLevel string `json:"logLevel,omitempty"`
	// PeerSharing makes the node take part in peer sharing: it answers
	// peers that ask for peers, asks them itself while it has fewer than
	// TargetPeers, and is shared by them. Off, the node keeps to its
	// topology (and whoever dials it) and no peer shares its address.
	// Unset: on for a relay, off for a block producer, as Cardano's
	// block-producer configs have it — a pool talks to its own relays and
	// its address is not spread (SharesPeers).
	PeerSharing *bool `json:"peerSharing,omitempty"`
	// TargetPeers is how many peers the node keeps: its topology's, always,
	// and with peer sharing, peers it dials at addresses peers shared, up
	// to this number. 0 is the default, 8.
	TargetPeers int `json:"targetPeers,omitempty"`
	// Pprof serves Go's profiles of the running node at /debug/pprof/ on
	// HTTPAddr. Off by default: anyone who reaches HTTPAddr could have the
	// node record a profile or a trace, which costs it while it runs.
	Pprof bool `json:"pprof,omitempty"`
	// TraceFile, if set, receives the node's events in the Leios
	// simulators' trace format (JSON lines), created anew at each start.
	TraceFile string `json:"traceFile,omitempty"`
	// LeiosProtocols is the Leios mini-protocol set the node serves and
	// speaks, read from its name as the file is decoded: "cip" (CIP-0164's),
	// "prototype" (the Haskell prototype's) or "both" (the default, the
	// zero value: the CIP's with the peers that serve them, the prototype's
	// with the others). Any other name is refused by Load.
	LeiosProtocols protocolset.Set `json:"leiosProtocols,omitempty"`

	// Path is the file Load read, for messages that name a setting.
	Path string `json:"-"`
}

// ChainDBDir and LeiosDBDir are the directories of the node's two stores,
// the chain's and the LeiosDB, in DatabasePath.
func (c *Config) ChainDBDir() string { return filepath.Join(c.DatabasePath, "chain") }
func (c *Config) LeiosDBDir() string { return filepath.Join(c.DatabasePath, "leios") }

// SharesPeers reports whether the node takes part in peer sharing:
// PeerSharing if set, else whether it is a relay.
func (c *Config) SharesPeers() bool {
	if c.PeerSharing != nil {
		return *c.PeerSharing
	}
	return c.IssuerKeyFile == ""
}

// Topology is topology.json: the static peers, as libp2p multiaddrs that end
// in /p2p/<peer id>.
type Topology struct {
	Peers []string `json:"peers"`
}

// Load reads a config file, resolves its paths and checks its settings. A
// field the config does not have, or a key given twice, is an error: a
// misspelt or repeated setting must not leave the node running without
// the value its operator meant.
func Load(path string) (*Config, error) {
	// Absolute, so that messages name the files wherever the node runs.
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c := Config{Path: path}
	if err := strictjson.Decode(b, &c); err != nil {
		if errors.Is(err, protocolset.ErrUnknown) {
			// The decoder says what the value is, not whose: the one
			// field of the type is.
			return nil, fmt.Errorf("config %s: leiosProtocols %w", path, err)
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	for _, p := range []*string{&c.GenesisFile, &c.TopologyFile, &c.DatabasePath, &c.NodeKeyFile, &c.IssuerKeyFile, &c.VRFKeyFile, &c.BLSKeyFile, &c.TraceFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	for _, a := range c.ListenAddrs {
		if _, err := multiaddr.NewMultiaddr(a); err != nil {
			return nil, fmt.Errorf("config %s: listenAddrs: %q: %w", path, a, err)
		}
	}
	if c.GenesisFile == "" || c.DatabasePath == "" || c.NodeKeyFile == "" {
		return nil, fmt.Errorf("config %s: genesisFile, databasePath and nodeKeyFile are required", path)
	}
	if (c.IssuerKeyFile == "") != (c.VRFKeyFile == "") {
		return nil, fmt.Errorf("config %s: a block producer needs both issuerSigningKeyFile and vrfSigningKeyFile", path)
	}
	if c.HTTPAddr != "" {
		if _, err := net.ResolveTCPAddr("tcp", c.HTTPAddr); err != nil {
			return nil, fmt.Errorf("config %s: httpAddr %s: %w", path, c.HTTPAddr, err)
		}
	}
	if c.TxCacheCapacity < 0 || c.TxCacheCapacity > 1<<32 {
		return nil, fmt.Errorf("config %s: txCacheCapacity is %d: it must be in [0, 2^32] (0 is the default)", path, c.TxCacheCapacity)
	}
	if c.TargetPeers < 0 {
		return nil, fmt.Errorf("config %s: targetPeers is %d: it must not be negative", path, c.TargetPeers)
	}
	if c.BLSKeyFile != "" && c.IssuerKeyFile == "" {
		return nil, fmt.Errorf("config %s: blsSigningKeyFile is a block producer's: it needs issuerSigningKeyFile and vrfSigningKeyFile", path)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return nil, fmt.Errorf("config %s: logLevel is %q: it must be debug, info, warn or error", path, c.LogLevel)
	}
	return &c, nil
}

// Level is LogLevel as a slog.Level: info when unset. Load refuses a
// config whose LogLevel is not one, so everything that loads the config
// (leiosnode run, db check) refuses it alike.
func (c *Config) Level() slog.Level {
	level, _ := parseLevel(c.LogLevel)
	return level
}

func parseLevel(s string) (slog.Level, error) {
	var level slog.Level // the zero Level is info
	if s == "" {
		return level, nil
	}
	err := level.UnmarshalText([]byte(s))
	return level, err
}

// ReadTopology reads a topology file; an empty path is no peers. Like
// Load, it refuses fields a topology does not have and keys given twice.
func ReadTopology(path string) (*Topology, error) {
	if path == "" {
		return &Topology{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	var t Topology
	if err := strictjson.Decode(b, &t); err != nil {
		return nil, fmt.Errorf("topology %s: %w", path, err)
	}
	for _, p := range t.Peers {
		m, err := multiaddr.NewMultiaddr(p)
		if err == nil {
			_, err = m.ValueForProtocol(multiaddr.P_P2P)
		}
		if err != nil {
			return nil, fmt.Errorf("topology %s: peer %q: %w", path, p, err)
		}
	}
	return &t, nil
}

// WriteJSON writes v as indented JSON, for the tools that generate configs.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
