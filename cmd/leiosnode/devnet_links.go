package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/devnet/wan"
)

// linkFlags are the devnet's flags of its emulated wide-area network.
type linkFlags struct {
	topology  string
	latency   time.Duration
	bandwidth string
}

func (f *linkFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.topology, "topology", "", "run the nodes of a Leios simulators' topology file (YAML or JSON): its nodes of most stake, their stakes' proportions and their links, each emulated with its latency and bandwidth (sets --nodes unless given)")
	fs.DurationVar(&f.latency, "link-latency", 0, "emulate every link with this one-way latency, each way (e.g. 40ms; with --topology it replaces the file's)")
	fs.StringVar(&f.bandwidth, "link-bandwidth", "", "emulate every link with this bandwidth each way: 100Mbit, 1Gbit, 12.5MB, 500kB, or bytes per second (with --topology it replaces the file's)")
}

// apply puts the topology and the links' shape into spec: the nodes are
// the topology's unless --nodes says how many of them to keep.
func (f *linkFlags) apply(cmd *cobra.Command, spec *layout.Spec) error {
	if f.latency < 0 {
		return fmt.Errorf("--link-latency %v: must not be negative", f.latency)
	}
	spec.LinkShape.Latency = f.latency
	if f.bandwidth != "" {
		rate, err := wan.ParseRate(f.bandwidth)
		if err != nil {
			return fmt.Errorf("--link-bandwidth: %w", err)
		}
		spec.LinkShape.BytesPerSecond = rate
	}
	if f.topology == "" {
		return nil
	}
	topo, err := layout.ReadTopology(f.topology)
	if err != nil {
		return err
	}
	spec.Topology = topo
	if !cmd.Flags().Changed("nodes") {
		spec.Nodes = len(topo.Nodes)
	}
	return nil
}
