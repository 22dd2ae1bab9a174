package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/consensus/capacity"
	"github.com/leiosnode/leiosnode/lab/load"
)

func newLoadCommand() *cobra.Command {
	var (
		nodeURLs, keyFiles []string
		rate               float64
		duration, warmup   time.Duration
		reportFile         string
		txSize             string
	)
	cmd := &cobra.Command{
		Use:   "load --node URL[,URL…] --skey FILE… --rate N --duration D [--tx-size DIST] [--report r.json]",
		Short: "Load a network with chains of signed txs through its nodes' APIs, then say what became of them",
		Long: `Submit --rate txs a second for --duration to the nodes at --node (their
HTTP APIs, at httpAddr in each node's config.json), from the funded
payment keys --skey (the funds/ keys genesis and devnet write are
such keys), as the devnet's firehose does:
  - each key pays itself tx after tx, each tx spending the one before, the
    first its address's largest output at its node
    (GET /api/addresses/{address}/utxos); key j goes to node j mod the
    number of nodes, so a tx never reaches a node before its parent;
  - the fees follow the nodes' protocol parameters (GET /api/parameters);
  - every 100 ms each key's due txs, each built on the one before, go to
    its node with the other keys' in one POST /api/submit/txs, which the
    node adds in order (a node without the route gets a POST a tx);
  - a 503 is sent again after its Retry-After; txs a node admitted and then
    dropped are sent again.
Give a key per 100 tx/s: a key its node refused waits out the Retry-After
while the others keep offering.
--tx-size pads each tx with metadata (a CIP-20 message) to a size drawn
from DIST, per key from a seed of its own: N bytes each, MIN-MAX
log-uniform between (e.g. 200-16384), or large (200-16384, a mean of
3,673 B); a tx is never below its plain payment (some 191 B), and one
padded at all is 44 B more at least. Without it every tx is a plain
payment. The lines and the report give the bytes too, in TxkB/s.
Each second a line says what was offered, admitted and refused (by the
nodes' reasons). At the end, the last txs get a few blocks' time to land,
then every node's chain is read and every admitted tx placed: on every
chain, in a mempool, or lost; with the latency from admission to the slot
of the block that applied it. Then the network's structural capacity, from
its slot length, f and Leios limits (GET /api/parameters) at the admitted
txs' mean size, beside what the chain carried after the --warmup: its rate,
the EBs certified against p_cert, and the latency against the model's.
--report writes the same as JSON.

Ctrl-C ends the load early and still checks the txs; a second Ctrl-C stops
at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			switch {
			case rate <= 0:
				return fmt.Errorf("--rate must be positive, not %g", rate)
			case duration <= 0:
				return fmt.Errorf("--duration must be positive, not %v", duration)
			}
			sizes, err := txSizeFlag(cmd, txSize)
			if err != nil {
				return err
			}
			keys, err := load.ReadKeys(keyFiles)
			if err != nil {
				return fmt.Errorf("--skey: %w", err)
			}
			nodes, err := loadNodes(nodeURLs)
			if err != nil {
				return fmt.Errorf("--node: %w", err)
			}
			client := apiclient.NewHTTPClient()
			var clock consensus.Clock
			for i, n := range nodes {
				if libp2pGreets(ctx, n.URL) {
					return fmt.Errorf("--node %s: that is the node's libp2p port, not its HTTP API: load needs the address in httpAddr of the node's config.json (genesis --hosts puts it at the next port)", n.URL)
				}
				c, err := slotClock(ctx, apiclient.New(client, n.URL))
				if err != nil {
					return fmt.Errorf("--node %s: %w", n.URL, err)
				}
				if i == 0 {
					clock = c
				}
			}
			f, err := load.New(ctx, nodes, keys, client, load.Options{Rate: rate, TxSize: sizes})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			network := loadedNetwork{clock: clock}
			network.capacity, network.noCapacity = capacityParams(ctx, client, nodes[0].URL)
			if network.warmup, err = loadWarmup(network.capacity, warmup, cmd.Flags().Changed("warmup")); err != nil {
				return err
			}
			started := time.Now()
			runLoad(ctx, f, duration, out)
			network.span, network.measured = load.NewSpan(started, network.warmup, time.Now())
			// A second Ctrl-C from here on stops the check at once.
			stop()
			r := settleLoad(cmd.Context(), f, apiclient.New(client, nodes[0].URL), network, out)
			if reportFile == "" {
				return nil
			}
			if err := config.WriteJSON(reportFile, r); err != nil {
				return fmt.Errorf("--report: %w", err)
			}
			fmt.Fprintf(out, "report written to %s\n", reportFile)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&nodeURLs, "node", nil, "base URLs of the nodes' HTTP APIs, e.g. http://10.0.0.1:3002,http://10.0.0.2:3002: each node's httpAddr, not its libp2p port (required)")
	fs.StringSliceVar(&keyFiles, "skey", nil, "funded payment signing key files, one chain of txs each; repeat the flag or separate by commas (required)")
	fs.Float64Var(&rate, "rate", 0, "txs per second offered over all keys (required)")
	fs.DurationVar(&duration, "duration", 0, "how long to offer them, e.g. 120s (required)")
	fs.DurationVar(&warmup, "warmup", 0, "leave this much of the load, from its start, out of the figures against the network's capacity "+
		"(default: the latency model's p95, the time a tx takes to reach the chain at capacity, so that the chain carries the load from the span's start)")
	fs.StringVar(&reportFile, "report", "", "write what became of the txs as JSON to this file at the end")
	fs.StringVar(&txSize, "tx-size", "", txSizeUsage)
	for _, name := range []string{"node", "skey", "rate", "duration"} {
		_ = cmd.MarkFlagRequired(name) // only fails for an unknown flag
	}
	return cmd
}

// loadNodes are the nodes at urls, each named by its host.
func loadNodes(urls []string) ([]load.Node, error) {
	var nodes []load.Node
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("%q is not a URL such as http://127.0.0.1:3002", raw)
		}
		nodes = append(nodes, load.Node{Name: u.Host, URL: raw})
	}
	return nodes, nil
}

// slotClock is the network's slot clock as the node's GET /status says it.
func slotClock(ctx context.Context, node apiclient.Client) (consensus.Clock, error) {
	st, err := node.Status(ctx)
	switch {
	case err != nil:
		return consensus.Clock{}, fmt.Errorf("does not answer: %w", err)
	case st.SlotLengthMs <= 0:
		return consensus.Clock{}, errors.New("its GET /status gives no slot clock: a node older than this command")
	}
	return consensus.Clock{Start: st.SystemStart, SlotLength: time.Duration(st.SlotLengthMs) * time.Millisecond}, nil
}

// libp2pGreets: the server at the http URL rawURL is a libp2p listener.
// Such a listener greets each connection with multistream-select's header
// (its length, 19, then "/multistream/1.0.0\n") before it reads a byte;
// Go's HTTP client fails on it naming no cause, and logs a line of its own
// when the greeting beats its request. Asked over a plain connection, the
// answer's first bytes tell. Any other outcome is left to the API's own
// request to report.
func libp2pGreets(ctx context.Context, rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" {
		return false
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline) // a conn fresh from Dial takes any deadline
	// Short, so that a libp2p listener reads it as the first bytes of a
	// longer message and waits, rather than close with it unread (a reset
	// that could discard its greeting before it is read here).
	if _, err := io.WriteString(conn, "HEAD / HTTP/1.0\r\n\r\n"); err != nil {
		return false
	}
	first := make([]byte, len(libp2pGreeting))
	_, err = io.ReadFull(conn, first)
	return err == nil && string(first) == libp2pGreeting
}

const libp2pGreeting = "\x13/multistream/"

// runLoad runs the firehose for duration, or until ctx ends, printing a
// line a second.
func runLoad(ctx context.Context, f *load.Firehose, duration time.Duration, out io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Run(ctx)
	}()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	start, last := time.Now(), f.Counts()
	for {
		select {
		case <-done:
			return
		case now := <-ticker.C:
			counts := f.Counts()
			fmt.Fprintln(out, loadLine(now.Sub(start), last, counts))
			last = counts
		}
	}
}

// loadLine is the line of a second of load: what was offered, admitted
// and refused in it (by reason), and in all since the start.
func loadLine(elapsed time.Duration, before, now load.Counts) string {
	var b strings.Builder
	refused := map[string]uint64{}
	var refusedAll uint64
	for reason, n := range now.Refused {
		refused[reason] = n - before.Refused[reason]
		refusedAll += n - before.Refused[reason]
	}
	fmt.Fprintf(&b, "%5.0fs offered %d (%.1f TxkB) admitted %d refused %d", elapsed.Seconds(),
		now.Submitted-before.Submitted, float64(now.SubmittedBytes-before.SubmittedBytes)/1000, now.Admitted-before.Admitted, refusedAll)
	if refusedAll > 0 {
		var reasons []string
		for _, reason := range slices.Sorted(maps.Keys(refused)) {
			if refused[reason] > 0 {
				reasons = append(reasons, fmt.Sprintf("%s %d", reason, refused[reason]))
			}
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(reasons, ", "))
	}
	fmt.Fprintf(&b, " | in all %d offered, %d admitted", now.Submitted, now.Admitted)
	return b.String()
}

// loadedNetwork is what the load command knows of the network it loads,
// from its first node: its slot clock (GET /status), the capacity model's
// inputs (GET /api/parameters) or why there are none, and the load's
// measured span after its warm-up.
type loadedNetwork struct {
	clock      consensus.Clock
	capacity   *capacity.Params
	noCapacity string
	warmup     time.Duration
	span       load.Span
	measured   bool // the load outlasted its warm-up: span holds
}

// capacityParams are the capacity model's inputs from the node at url's
// GET /api/parameters, or why there are none.
func capacityParams(ctx context.Context, client *http.Client, url string) (*capacity.Params, string) {
	p, err := apiclient.NetworkParameters(ctx, client, url)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("GET /api/parameters of %s: %v", url, err)
	case p.SlotLengthMs <= 0 || p.ActiveSlotsCoeff == "" || p.Leios == nil:
		return nil, fmt.Sprintf("the GET /api/parameters of %s gives no slot length, f and Leios limits: a node older than this command", url)
	}
	f, err := p.ActiveSlotsCoeff.Float64()
	if err != nil {
		return nil, fmt.Sprintf("the activeSlotsCoeff %q of %s: %v", p.ActiveSlotsCoeff, url, err)
	}
	// The answer's Leios parameters are the genesis' own fields (the API's
	// tests hold them so): read back into consensus' type.
	var leios consensus.LeiosParams
	raw, err := json.Marshal(*p.Leios)
	if err == nil {
		err = json.Unmarshal(raw, &leios)
	}
	if err != nil {
		return nil, fmt.Sprintf("the Leios parameters of %s: %v", url, err)
	}
	params := capacity.NewParams(time.Duration(p.SlotLengthMs)*time.Millisecond, f, leios)
	return &params, ""
}

// loadWarmup is the load's warm-up: the one given, else the latency
// model's p95 rounded up to a second (none without a model).
func loadWarmup(params *capacity.Params, given time.Duration, isGiven bool) (time.Duration, error) {
	switch {
	case isGiven && given < 0:
		return 0, fmt.Errorf("--warmup %v: must not be negative", given)
	case isGiven || params == nil:
		return given, nil
	}
	l, err := capacity.NewLatencyModel(*params)
	if err != nil {
		return 0, nil // the capacity check says why, at the end
	}
	return (time.Duration(l.P95Ms)*time.Millisecond + time.Second - 1).Truncate(time.Second), nil
}

// settleLoad gives the last txs time to land, places every admitted tx,
// checks the run against the network's capacity and prints the report's
// lines. The grace is two slots and five blocks, the block interval 1/f
// slots (read off node's chain when the node does not give f).
func settleLoad(ctx context.Context, f *load.Firehose, node apiclient.Client, network loadedNetwork, out io.Writer) *load.Report {
	f.Sweep(ctx)
	slotsPerBlock := 20.0 // an f of 0.05 when neither the node nor its chain says
	if p := network.capacity; p != nil {
		slotsPerBlock = 1 / p.ActiveSlotsCoeff
	} else if st, err := node.Status(ctx); err == nil && st.Tip.BlockNumber > 0 {
		slotsPerBlock = float64(st.Tip.Slot) / float64(st.Tip.BlockNumber)
	}
	grace := load.InFlightGrace(network.clock.SlotLength, slotsPerBlock)
	fmt.Fprintf(out, "load stopped; giving its last txs up to %v to reach every chain\n", grace.Round(time.Millisecond))
	settled := f.AwaitInFlight(ctx, grace)
	var span *load.Span
	if network.measured {
		span = &network.span
	}
	r, walks := f.Settle(ctx, network.clock, span)
	r.Settled = settled
	noCapacity := network.noCapacity
	if p := network.capacity; p != nil {
		m, err := capacity.New(*p, r.MeanTxBytes)
		if err != nil {
			noCapacity = err.Error()
		} else {
			spanIs := fmt.Sprintf("from the load's start plus its warm-up of %v to its stop", network.warmup)
			r.Capacity = load.CheckCapacity(m, load.CommonPrefix(load.Answered(walks)), network.clock, span, spanIs, r.LatencyInSpan, r.Offers)
		}
	}
	r.Print(out)
	if noCapacity != "" {
		fmt.Fprintf(out, "the network's capacity not modelled: %s\n", noCapacity)
	}
	return r
}
