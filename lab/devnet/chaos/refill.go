package chaos

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/api/apiclient"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/config"
)

// RefillAccount is what a refill fault did and saw: the certified closures
// the victim's chain held when its LeiosDB was deleted, the peer stopped
// half-way through fetching them again, and how long until every one was
// back and every block of its chain served.
type RefillAccount struct {
	// Certified counts the CertRBs on the victim's chain at the last poll
	// before the kill; Missing the most certified closures it said were
	// missing after its restart.
	Certified uint64 `json:"certified"`
	Missing   int    `json:"missing"`
	// PeerStopped is the peer stopped once half of them were back (at
	// StoppedAtMissing still missing), and started again after the refill.
	PeerStopped      string `json:"peerStopped,omitempty"`
	StoppedAtMissing int    `json:"stoppedAtMissing,omitempty"`
	// RefilledMs runs from the victim's restart to its first status with
	// no certified closure missing; BlocksServed is how many blocks its
	// /api/blocks then answered, every one up to its tip.
	RefilledMs   *int64 `json:"refilledMs,omitempty"`
	BlocksServed uint64 `json:"blocksServed,omitempty"`
}

// wipeLeiosDB deletes node i's LeiosDB, as an operator who lost the disk
// under it would: the node is down.
func (c *devnetChaos) wipeLeiosDB(i int) error {
	cfg, err := config.Load(c.d.Nodes[i].ConfigFile)
	if err != nil {
		return err
	}
	return os.RemoveAll(cfg.LeiosDBDir())
}

// servedBlocks walks node i's /api/blocks from the first block to its
// tip, page after page, and returns how many blocks it answered; any
// refusal (a closure not back: 503) is the error.
func (c *devnetChaos) servedBlocks(ctx context.Context, i int) (uint64, error) {
	var served uint64
	for from := uint64(1); ; {
		blocks, err := c.apis[i].Blocks(ctx, from, 1000)
		if err != nil {
			return served, fmt.Errorf("/api/blocks?from=%d: %w", from, err)
		}
		if len(blocks) == 0 {
			return served, nil
		}
		served += uint64(len(blocks))
		from = blocks[len(blocks)-1].Number + 1
	}
}

// watchRefill follows the victim of a refill fault from its restart
// (restarted) until its LeiosDB holds every certified closure of its chain
// again: once half of them are back it stops one of the victim's peers,
// and starts it again when the refill is done and every block is served.
// It reports false, with why, if that took past the recovery timeout.
func (s *Scheduler) watchRefill(ctx context.Context, f *Fault, victim int, restarted time.Time) (bool, string) {
	r := f.Refill
	stopped := -1
	defer func() {
		if stopped >= 0 {
			if err := s.target.restart(stopped); err != nil {
				s.say("chaos: restarting %s after the refill: %v", s.names[stopped], err)
			}
		}
	}()
	end := s.watch(ctx, restarted.Add(s.recoveryTimeout), func(polls []apiclient.StatusPoll) {
		st := polls[victim].Status
		if st == nil {
			return
		}
		if f.TipAfter == nil {
			f.TipAfter = &st.Tip
		}
		missing := st.Leios.CertifiedClosuresMissing
		r.Missing = max(r.Missing, missing)
		if stopped < 0 && r.Missing > 1 && missing > 0 && missing <= r.Missing/2 {
			if stopped = s.peerOf(victim, st.Peers); stopped >= 0 {
				r.PeerStopped, r.StoppedAtMissing = s.names[stopped], missing
				s.say("chaos: %s has %d of %d certified closures still to fetch: stopping its peer %s (SIGKILL) until it has them all",
					s.names[victim], missing, r.Missing, r.PeerStopped)
				if err := s.target.kill(stopped); err != nil {
					s.say("chaos: stopping %s: %v", r.PeerStopped, err)
					stopped = -1
				}
			}
		}
		if missing == 0 && r.RefilledMs == nil {
			ms := s.clock.Now().Sub(restarted).Milliseconds()
			r.RefilledMs = &ms
		}
	}, func() bool { return r.RefilledMs != nil })
	switch end {
	case watchCancelled:
		return false, "the run ended during the refill"
	case watchReached:
		return false, fmt.Sprintf("%s's LeiosDB still lacks certified closures %v after its restart (at most %d missing)", s.names[victim], s.recoveryTimeout, r.Missing)
	}
	served, err := s.target.servedBlocks(ctx, victim)
	r.BlocksServed = served
	if err != nil {
		return false, fmt.Sprintf("%s refilled but does not serve every block: %v", s.names[victim], err)
	}
	s.say("chaos: %s holds every certified closure again %.1fs after its restart (%d were missing) and serves all %d blocks of its chain",
		s.names[victim], float64(*r.RefilledMs)/1000, r.Missing, served)
	return true, ""
}

// peerOf picks the node to stop during a refill: the first of the victim's
// peers (by its status) that is a node of the devnet, -1 if none is.
func (s *Scheduler) peerOf(victim int, peers []apitypes.Peer) int {
	for _, p := range peers {
		if j := slices.Index(s.peers, p.ID); j >= 0 && j != victim {
			return j
		}
	}
	return -1
}
