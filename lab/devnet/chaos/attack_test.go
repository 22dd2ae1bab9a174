package chaos

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/config"
	"github.com/leiosnode/leiosnode/internal/waittest"
	"github.com/leiosnode/leiosnode/lab/devnet/layout"
	"github.com/leiosnode/leiosnode/lab/hostile"
	"github.com/leiosnode/leiosnode/node"
)

// TestAttacksReachANode runs the attacks that need no loaded chain, one
// after another, on one node in this process, and asserts of each that
// the node's counters of refusals it is meant to move do move: each ends
// as soon as they have. The unread attacks (http-unread, fetch-unread)
// hold answers only once the chain's blocks and closures outgrow the
// kernel's and yamux's buffers, which a devnet under load has and this
// node has not; the devnet run checks them.
func TestAttacksReachANode(t *testing.T) {
	tmpl, err := layout.LoadTemplate("")
	if err != nil {
		t.Fatal(err)
	}
	// A short k and more leaders: slot 1, which cip-junk names, is soon
	// below the immutable tip.
	tmpl.SecurityParam = 3
	tmpl.ActiveSlotsCoeff = "0.3"
	d, err := layout.Write(layout.Spec{Dir: t.TempDir(), Nodes: 1, Template: tmpl, SystemStart: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(d.Nodes[0].ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(cfg, node.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(waittest.Context(t))
	var running errgroup.Group
	running.Go(func() error { return n.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		if err := running.Wait(); err != nil {
			t.Errorf("the node: %v", err)
		}
	})

	client := &http.Client{Timeout: 10 * time.Second}
	url := "http://" + d.Nodes[0].HTTPAddr
	api := apiclient.New(client, url)
	waittest.Until(t, "the node's immutable tip past slot 1", func() bool {
		st, err := api.Status(ctx)
		return err == nil && st.ImmutableTip.Slot > 1
	})
	metrics := func() *nodeMetrics {
		t.Helper()
		var m *nodeMetrics
		waittest.Until(t, "the node's /metrics", func() bool {
			m, err = readMetrics(ctx, client, url)
			return err == nil
		})
		return m
	}

	for _, tc := range []struct {
		attack hostile.Attack
		// moved says whether the counters that moved since the attack
		// began (countersMoved) and its tally show the node's answer.
		moved func(moved map[string]float64, tally *hostile.Tally) bool
		// settled, if set, is checked once the attack has ended, until
		// it holds: the account is final.
		settled func(moved map[string]float64, tally *hostile.Tally) bool
	}{
		{attack: hostile.HTTPSlowUpload, moved: func(m map[string]float64, _ *hostile.Tally) bool {
			return m[`leiosnode_api_limit_refusals_total{limit="uploads"}`] > 0
		}},
		{attack: hostile.CIPJunk, moved: func(m map[string]float64, _ *hostile.Tally) bool {
			return m[`leiosnode_network_useless_total{what="immutable"}`] > 0 &&
				sumOf(m, "leiosnode_network_violations_total", `kind="wasteful"`) > 0
		}},
		{
			attack: hostile.CIPViolation,
			moved: func(m map[string]float64, tally *hostile.Tally) bool {
				return offencesCounted(m) > 0 && tally.SiblingsClosed.Load() > 0
			},
			// One violation an offence: the siblings closed with it are not
			// counted, nor is any stream the node reopens to the offender.
			settled: func(m map[string]float64, tally *hostile.Tally) bool {
				if counted, offences := offencesCounted(m), float64(tally.Offences.Load()); counted > offences {
					t.Fatalf("%v violations counted for %v offences: %v", counted, offences, m)
				}
				return offencesCounted(m) == float64(tally.Offences.Load()) &&
					sumOf(m, "leiosnode_network_violations_total", "") == offencesCounted(m)
			},
		},
		{attack: hostile.FetchNotHeld, moved: func(m map[string]float64, _ *hostile.Tally) bool {
			return m[`leiosnode_network_useless_total{what="not_held"}`] > 0 &&
				m[`leiosnode_network_violations_total{kind="wasteful",protocol="fetch"}`] > 0
		}},
	} {
		t.Run(string(tc.attack), func(t *testing.T) {
			target, err := Target(ctx, d.Nodes[0], d.Genesis, api, Kind(tc.attack))
			if err != nil {
				t.Fatal(err)
			}
			before := metrics()
			var tally hostile.Tally
			actx, stop := context.WithCancel(ctx)
			var attacking errgroup.Group
			attacking.Go(func() error { return hostile.Run(actx, tc.attack, target, &tally) })
			var moved map[string]float64
			waittest.Until(t, string(tc.attack)+" moving the node's counters", func() bool {
				moved = countersMoved(before, metrics())
				return tc.moved(moved, &tally)
			})
			stop()
			if err := attacking.Wait(); err != nil {
				t.Fatal(err)
			}
			if tc.settled != nil {
				waittest.Until(t, string(tc.attack)+"'s account settling", func() bool {
					moved = countersMoved(before, metrics())
					return tc.settled(moved, &tally)
				})
			}
			t.Logf("%s: moved %v; the attacker: %s", tc.attack, moved, tally.String())
		})
	}
}

// offencesCounted are the violations counted for cip-violation's offence.
func offencesCounted(m map[string]float64) float64 {
	return m[`leiosnode_network_violations_total{kind="unexpected_message",protocol="blocknotify"}`]
}

// sumOf adds the counters of family whose labels contain label.
func sumOf(m map[string]float64, family, label string) float64 {
	var sum float64
	for name, v := range m {
		if strings.HasPrefix(name, family) && strings.Contains(name, label) {
			sum += v
		}
	}
	return sum
}
