package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
)

// ebListTimeout bounds GET /api/ebs: a node lists thousands of EBs.
const ebListTimeout = 10 * time.Second

func newStatusCommand() *cobra.Command {
	var (
		nodeURL string
		ebs     bool
	)
	cmd := &cobra.Command{
		Use:   "status --node URL [--ebs]",
		Short: "Print a node's state for a person: slot, tips, peers, mempool, EBs, votes, errors, forks",
		Long: `Print what GET URL/status says, one line a topic: the node's peer ID and
role, the slot, its tip and immutable tip, its peers (with their address,
who dialed whom and since when), the mempool, its blocks, the endorser
blocks and votes, the errors it logged, and the forks deeper than k it sees
(with what to do when it is stranded on one).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			url := nodeURL
			if !strings.Contains(url, "://") {
				url = "http://" + url
			}
			if ebs {
				var list []apitypes.EBTimes
				if err := apiclient.New(&http.Client{}, url).Fetch(cmd.Context(), "/api/ebs", ebListTimeout, &list); err != nil {
					return fmt.Errorf("node %s: %w", url, err)
				}
				printEBs(cmd.OutOrStdout(), list)
				return nil
			}
			var st nodeStatus
			if err := apiclient.GetStatus(cmd.Context(), &http.Client{}, url, &st); err != nil {
				return fmt.Errorf("node %s: %w", url, err)
			}
			st.print(cmd.OutOrStdout(), time.Now())
			return nil
		},
	}
	cmd.Flags().StringVar(&nodeURL, "node", "", "the node's HTTP API (its config's httpAddr), e.g. http://10.0.0.1:3002 (required)")
	cmd.Flags().BoolVar(&ebs, "ebs", false, "list the node's recent EBs instead: stages, votes, and each one's fate on its chain (certified by which block, or why not)")
	_ = cmd.MarkFlagRequired("node") // only fails for an unknown flag
	return cmd
}

// nodeStatus is GET /status as the status command reads it: apitypes.Status,
// with its peers read in either shape a node serves (statusPeers).
type nodeStatus struct {
	apitypes.Status
	Peers statusPeers `json:"peers"` // shadows apitypes.Status.Peers
}

// statusPeer is one peer of /status. A node that lists its peers by ID
// alone gives only ID.
type statusPeer struct {
	ID        string    `json:"id"`
	Addr      string    `json:"addr"`
	Direction string    `json:"direction"` // inbound or outbound
	Since     time.Time `json:"since"`
}

// statusPeers are /status's peers: objects {"id", "addr", "direction",
// "since"}, or, from a node that has no more to say, a list of peer IDs.
type statusPeers []statusPeer

func (p *statusPeers) UnmarshalJSON(b []byte) error {
	var ids []string
	if err := json.Unmarshal(b, &ids); err == nil {
		*p = make(statusPeers, len(ids))
		for i, id := range ids {
			(*p)[i] = statusPeer{ID: id}
		}
		return nil
	}
	var peers []statusPeer
	if err := json.Unmarshal(b, &peers); err != nil {
		return fmt.Errorf("peers: %w", err)
	}
	*p = peers
	return nil
}

// print writes the status one topic a line, as of now.
func (st *nodeStatus) print(w io.Writer, now time.Time) {
	role := "relay"
	if st.Producer {
		role = "block producer"
	}
	fmt.Fprintf(w, "node       %s (%s)\n", st.PeerID, role)
	fmt.Fprintf(w, "slot       %d\n", st.Slot)
	fmt.Fprintf(w, "tip        %s", tipLine(st.Tip))
	if st.Tip.BlockNumber > 0 && st.Slot >= st.Tip.Slot {
		if ago := st.Slot - st.Tip.Slot; ago == 1 {
			fmt.Fprint(w, ", 1 slot ago")
		} else {
			fmt.Fprintf(w, ", %d slots ago", ago)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "immutable  %s\n", tipLine(st.ImmutableTip))
	fmt.Fprintf(w, "chain      %d txs, %d EBs certified\n", st.TxsOnChain, st.CertRBsOnChain)
	if l := st.Leios; l.CertifiedClosuresMissing > 0 && l.MissingSince != nil {
		fmt.Fprintf(w, "refill     %d certified closures missing from the LeiosDB since %s (%s): fetching them from peers\n",
			l.CertifiedClosuresMissing, l.MissingSince.Format(time.RFC3339), now.Sub(*l.MissingSince).Round(time.Second))
	}
	fmt.Fprintf(w, "blocks     since the start: %d forged here, %d adopted\n", st.BlocksForged, st.BlocksAdopted)
	fmt.Fprintf(w, "peers      %d\n", len(st.Peers))
	for _, p := range st.Peers {
		fmt.Fprintf(w, "  %s", p.ID)
		if p.Addr != "" {
			fmt.Fprintf(w, "  %s", p.Addr)
		}
		if p.Direction != "" {
			fmt.Fprintf(w, "  %s", p.Direction)
		}
		if !p.Since.IsZero() {
			fmt.Fprintf(w, "  since %s (%s)", p.Since.Format(time.RFC3339), now.Sub(p.Since).Round(time.Second))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "mempool    %d txs, %d bytes\n", st.Mempool.Txs, st.Mempool.Bytes)
	l := st.Leios
	fmt.Fprintf(w, "EBs        since the start: %d forged here, %d announced, %d bodies held, %d closures complete, %d certified; now %d txs missing, %d requests in flight\n",
		l.EBsForged, l.EBsAnnounced, l.BodiesHeld, l.ClosuresComplete, l.EBsCertified, l.MissingTxs, l.RequestsInFlight)
	fmt.Fprintf(w, "votes      since the start: %d cast, %d received, %d invalid; %d certificates built\n", l.VotesCast, l.VotesReceived, l.VotesInvalid, l.CertificatesBuilt)
	fmt.Fprintf(w, "errors     %d logged\n", st.Errors)
	f := st.Forks
	switch {
	case f.Stranded:
		fmt.Fprintf(w, "forks      STRANDED: every peer's chain forks from this node's deeper than k; stop the node, delete its databasePath and start it again to resync\n")
	case len(f.Peers) > 0:
		fmt.Fprintf(w, "forks      %d peers on a chain that forks deeper than k (%d seen since the start); this node is on the chain of its other peers\n", len(f.Peers), f.DeepForks)
	default:
		fmt.Fprintf(w, "forks      none deeper than k (%d seen since the start)\n", f.DeepForks)
	}
	for _, p := range f.Peers {
		fmt.Fprintf(w, "  %s  tip %s\n", p.ID, tipLine(p.Tip))
	}
}

// tipLine is a tip for a person: block number, slot and hash.
func tipLine(t apitypes.TipStatus) string {
	if t.BlockNumber == 0 {
		return "genesis (no block yet)"
	}
	return fmt.Sprintf("#%d at slot %d, %s", t.BlockNumber, t.Slot, t.Hash)
}
