package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/leios/protocolset"
)

// devnetFlags are the generation flags genesis and devnet share.
type devnetFlags struct {
	nodes        int
	funded       int
	templateFile string
	basePort     int
	logLevel     string
	protocols    layout.Protocols
	// Overrides of the template, applied only when given.
	slotLengthMs     int64
	activeSlotsCoeff string
	securityParam    int
}

func (f *devnetFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.IntVar(&f.nodes, "nodes", 3, "number of block-producing nodes (one pool each, equal stake)")
	fs.IntVar(&f.funded, "funded", 10, "number of funded addresses; their payment keys go to DIR/funds/")
	fs.StringVar(&f.templateFile, "template", "", "genesis template (default: the built-in configs/devnet.json)")
	fs.IntVar(&f.basePort, "base-port", 0, "node i listens on BASE+2i (libp2p) and BASE+2i+1 (HTTP); 0 = free ports")
	fs.StringVar(&f.logLevel, "log-level", "", "log level written into each node's config: debug, info, warn, error")
	// The names are the one list's, protocolset's, and mixed.
	names := layout.ProtocolsNames()
	fs.TextVar(&f.protocols, "protocols", layout.Protocols{}, "the Leios mini-protocol `SET` the pools serve and speak (each config's leiosProtocols): "+
		strings.Join(names[:len(names)-1], ", ")+" or "+names[len(names)-1]+" (pool i speaks "+strings.Join(protocolset.Names(), ", ")+" in turn)")
	fs.Int64Var(&f.slotLengthMs, "slot-length-ms", 0, "slot length in ms (overrides the template)")
	fs.StringVar(&f.activeSlotsCoeff, "active-slots-coeff", "", "active slot coefficient f, a decimal (overrides the template)")
	fs.IntVar(&f.securityParam, "security-param", 0, "security parameter k in blocks (overrides the template)")
}

// spec resolves the flags into a layout.Spec: the template, then the
// overrides the user gave.
func (f *devnetFlags) spec(cmd *cobra.Command, dir string, systemStart time.Time) (layout.Spec, error) {
	t, err := layout.LoadTemplate(f.templateFile)
	if err != nil {
		return layout.Spec{}, err
	}
	fs := cmd.Flags()
	if fs.Changed("slot-length-ms") {
		t.SlotLengthMs = f.slotLengthMs
	}
	if fs.Changed("active-slots-coeff") {
		t.ActiveSlotsCoeff = json.Number(f.activeSlotsCoeff)
	}
	if fs.Changed("security-param") {
		t.SecurityParam = f.securityParam
	}
	return layout.Spec{
		Dir:         dir,
		Nodes:       f.nodes,
		Funded:      f.funded,
		Template:    t,
		SystemStart: systemStart,
		BasePort:    f.basePort,
		LogLevel:    f.logLevel,
		Protocols:   f.protocols,
	}, nil
}

// hostFlags are genesis's flags of a network on several hosts.
type hostFlags struct {
	hosts      []string
	hostsFile  string
	relays     int
	relayHosts []string
}

func (f *hostFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringSliceVar(&f.hosts, "hosts", nil, "lay the pools out on several hosts: one listen address per pool, e.g. 10.0.0.1:3001,10.0.0.2:3001 or multiaddrs (default: all on loopback)")
	fs.StringVar(&f.hostsFile, "hosts-file", "", "as --hosts, one address a line (# starts a comment)")
	fs.IntVar(&f.relays, "relays", 0, "number of relays: nodes without pool keys that forge nothing (DIR/relay-j/)")
	fs.StringSliceVar(&f.relayHosts, "relay-hosts", nil, "the relays' listen addresses, one per relay (required with --relays and --hosts)")
}

// apply puts the hosts and relays into spec: the pools are as many as the
// hosts unless --nodes says otherwise, and the relays as many as their
// hosts unless --relays does.
func (f *hostFlags) apply(cmd *cobra.Command, spec *layout.Spec) error {
	fs := cmd.Flags()
	hosts := f.hosts
	if f.hostsFile != "" {
		if len(hosts) > 0 {
			return errors.New("give the hosts with --hosts or --hosts-file, not both")
		}
		var err error
		if hosts, err = readHostsFile(f.hostsFile); err != nil {
			return err
		}
	}
	spec.Hosts, spec.Relays, spec.RelayHosts = hosts, f.relays, f.relayHosts
	if len(hosts) > 0 && !fs.Changed("nodes") {
		spec.Nodes = len(hosts)
	}
	if len(f.relayHosts) > 0 && !fs.Changed("relays") {
		spec.Relays = len(f.relayHosts)
	}
	return nil
}

// readHostsFile reads --hosts-file: one host a line; blank lines and
// everything from a # are ignored.
func readHostsFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--hosts-file: %w", err)
	}
	var hosts []string
	for line := range strings.Lines(string(b)) {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" {
			hosts = append(hosts, line)
		}
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("--hosts-file %s: no hosts in it", path)
	}
	return hosts, nil
}

func newGenesisCommand() *cobra.Command {
	var (
		flags      devnetFlags
		hosts      hostFlags
		dir        string
		startDelay time.Duration
	)
	cmd := &cobra.Command{
		Use:   "genesis --dir DIR [--hosts ADDR,… [--relays N --relay-hosts ADDR,…]]",
		Short: "Write a network: genesis, keys, and each node's config and topology",
		Long: `Write a network into DIR: genesis.json (one pool per node, equal stake, each
with its BLS voting key and proof of possession, and funded addresses),
DIR/funds/ (the funded addresses' payment keys), per pool DIR/node-i/ with
its node, issuer, VRF and BLS keys, config.json and topology.json, and per
relay (--relays) DIR/relay-j/ with its node key, config.json and
topology.json. Every node's topology names every other node (a full mesh).

By default every node listens on loopback: a devnet for this machine.
--hosts puts the pools on several hosts: pool i listens on the i-th address
(host:port, a bare host for port ` + fmt.Sprint(layout.DefaultHostPort) + `, or a multiaddr such as
/ip4/10.0.0.1/tcp/3001 or /dns/node1.example.org/tcp/3001), serves its HTTP
API on the same host at the next port, and the others dial it there; relays
then need --relay-hosts. Each node's directory then holds its own copy of
the genesis: copy it whole to its host. For a network on several hosts use
--template configs/testnet.json (see docs/operations.md, "A testnet on several hosts").

Start a node with: leiosnode run --config DIR/node-i/config.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := flags.spec(cmd, dir, time.Now().Add(startDelay))
			if err != nil {
				return err
			}
			if err := hosts.apply(cmd, &spec); err != nil {
				return err
			}
			d, err := layout.Write(spec)
			if err != nil {
				return err
			}
			d.Print(cmd.OutOrStdout())
			return nil
		},
	}
	flags.register(cmd)
	hosts.register(cmd)
	cmd.Flags().StringVar(&dir, "dir", "", "directory to write the network into (required)")
	cmd.Flags().DurationVar(&startDelay, "start-delay", 10*time.Second, "system start = now + this")
	_ = cmd.MarkFlagRequired("dir") // only fails for an unknown flag
	cmd.AddCommand(newGenesisAddCommand())
	return cmd
}
