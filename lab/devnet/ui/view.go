package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/leiosnode/leiosnode/consensus"
)

// pageQueue is how many frames wait for a page before the next is
// dropped: a few seconds of a page that stalls, then it misses frames.
const pageQueue = 8

// View turns the devnet's observations into frames and sends them to the
// pages connected. Observe is called by the devnet's loop alone; the
// pages' handlers only subscribe and read.
type View struct {
	names       []string
	clock       consensus.Clock
	seats       int
	quorumVotes int

	mu      sync.Mutex // guards the fields below
	seq     uint64
	latest  []byte    // the latest frame, nil before the first
	rates   []float64 // the on-chain rates of the latest rounds
	pages   map[*page]struct{}
	dropped uint64
}

// page is one connected page's queue of frames.
type page struct{ frames chan []byte }

// New is the view of a devnet of the nodes named (in the order of its
// observations) on genesis g, whose committee the votes are counted
// against.
func New(names []string, g *consensus.Genesis) (*View, error) {
	committee, err := consensus.NewCommittee(g)
	if err != nil {
		return nil, fmt.Errorf("live view: the committee: %w", err)
	}
	return &View{
		names: slices.Clone(names), clock: g.Clock(),
		seats: committee.Size(), quorumVotes: quorumVotes(committee),
		pages: map[*page]struct{}{},
	}, nil
}

// quorumVotes is the fewest seats whose stake reaches the quorum, the
// largest seats first: how many votes an EB needs at least (exactly, when
// the pools' stakes are equal, as a devnet's are).
func quorumVotes(c *consensus.Committee) int {
	stakes := make([]uint64, c.Size())
	for i := range stakes {
		seat, _ := c.Seat(uint16(i))
		stakes[i] = seat.Stake
	}
	slices.Sort(stakes)
	var sum uint64
	for n, stake := range slices.Backward(stakes) {
		if sum += stake; sum >= c.QuorumStake() {
			return len(stakes) - n
		}
	}
	return len(stakes) // not reached: the quorum is below the committee's stake
}

// Observe makes a frame of o and sends it to every page connected,
// dropping it for a page whose queue is full. It never blocks on a page.
func (v *View) Observe(o Observation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	if math.IsNaN(o.Txs.PerSecond) || math.IsInf(o.Txs.PerSecond, 0) {
		o.Txs.PerSecond = 0 // JSON has no such numbers
	}
	v.rates = append(v.rates, o.Txs.PerSecond)
	v.rates = v.rates[max(0, len(v.rates)-maxRates):]
	f := frame{
		Seq: v.seq, At: o.At, Slot: v.clock.SlotAt(o.At), Started: !o.At.Before(v.clock.Start), Dropped: v.dropped,
		Seats: v.seats, QuorumVotes: v.quorumVotes, Stages: stages,
		Nodes: nodeFrames(v.names, o), Txs: o.Txs, Rates: v.rates, EBs: ebFrames(o.Nodes),
	}
	b, err := json.Marshal(f)
	if err != nil {
		// Not reached: a frame holds the nodes' own JSON and finite
		// rates. Were it, the pages would miss this frame, counted.
		v.dropped++
		return
	}
	v.latest = b
	for p := range v.pages {
		select {
		case p.frames <- b:
		default:
			v.dropped++
		}
	}
}

// Dropped counts the frames dropped because a page's queue was full.
func (v *View) Dropped() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.dropped
}

// subscribe connects a page: it returns its queue and the latest frame
// (nil before the first), which precedes everything the queue will hold.
func (v *View) subscribe() (*page, []byte) {
	p := &page{frames: make(chan []byte, pageQueue)}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.pages[p] = struct{}{}
	return p, v.latest
}

// unsubscribe disconnects a page.
func (v *View) unsubscribe(p *page) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.pages, p)
}
