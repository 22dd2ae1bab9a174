package main

import (
	"encoding/json"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/internal/devnet"
)

// devnetFlags are the generation flags genesis and devnet share.
type devnetFlags struct {
	nodes        int
	funded       int
	templateFile string
	basePort     int
	logLevel     string
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
	fs.Int64Var(&f.slotLengthMs, "slot-length-ms", 0, "slot length in ms (overrides the template)")
	fs.StringVar(&f.activeSlotsCoeff, "active-slots-coeff", "", "active slot coefficient f, a decimal (overrides the template)")
	fs.IntVar(&f.securityParam, "security-param", 0, "security parameter k in blocks (overrides the template)")
}

// spec resolves the flags into a devnet.Spec: the template, then the
// overrides the user gave.
func (f *devnetFlags) spec(cmd *cobra.Command, dir string, systemStart time.Time) (devnet.Spec, error) {
	t, err := devnet.LoadTemplate(f.templateFile)
	if err != nil {
		return devnet.Spec{}, err
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
	return devnet.Spec{
		Dir:         dir,
		Nodes:       f.nodes,
		Funded:      f.funded,
		Template:    t,
		SystemStart: systemStart,
		BasePort:    f.basePort,
		LogLevel:    f.logLevel,
	}, nil
}

func newGenesisCommand() *cobra.Command {
	var (
		flags      devnetFlags
		dir        string
		startDelay time.Duration
	)
	cmd := &cobra.Command{
		Use:   "genesis --dir DIR",
		Short: "Write a devnet: genesis, keys, and each node's config and topology",
		Long: `Write a devnet into DIR: genesis.json (one pool per node, equal stake, each
with its BLS voting key and proof of possession, and funded addresses),
DIR/funds/ (the funded addresses' payment keys), and per node DIR/node-i/
with its node, issuer, VRF and BLS keys, config.json and topology.json (a
full mesh). Start a node with: leiosnode run --config DIR/node-i/config.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := flags.spec(cmd, dir, time.Now().Add(startDelay))
			if err != nil {
				return err
			}
			d, err := devnet.Write(spec)
			if err != nil {
				return err
			}
			d.Print(cmd.OutOrStdout())
			return nil
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVar(&dir, "dir", "", "directory to write the devnet into (required)")
	cmd.Flags().DurationVar(&startDelay, "start-delay", 10*time.Second, "system start = now + this")
	_ = cmd.MarkFlagRequired("dir") // only fails for an unknown flag
	return cmd
}
