package leios

import "github.com/leiosnode/leiosnode/block"

// The names traces give EBs and votes (package simtrace): an EB is named
// by the RB header that announced it, the first one this node accepted,
// and by that RB's slot. The messages that carry an EB's body or a vote
// name the EB otherwise (by its hash; a CIP vote by slot and EB hash; a
// prototype vote by RB hash), so the trace asks the pipeline, which saw
// every announcement, whichever path brought it. EBs older than the
// remembered ones (maxEBTimes) have no name.

// AnnouncerOf is the first RB announcing an EB of hash ebHash accepted
// here, and its slot.
func (p *Pipeline) AnnouncerOf(ebHash block.Hash) (rb block.Point, ok bool) {
	l := p.ebs
	l.mu.Lock()
	defer l.mu.Unlock()
	// The EB may have been announced at several slots (the same body
	// again): the first announcement is the name.
	for _, pt := range l.order {
		if e := l.byPoint[pt]; pt.Hash == ebHash && e.rb != (block.Hash{}) {
			return block.Point{Slot: pt.Slot, Hash: e.rb}, true
		}
	}
	return block.Point{}, false
}

// AnnouncerAt is the first RB announcing pt's EB accepted here.
func (p *Pipeline) AnnouncerAt(pt block.Point) (rb block.Hash, ok bool) {
	l := p.ebs
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.byPoint[pt]; e != nil && e.rb != (block.Hash{}) {
		return e.rb, true
	}
	return block.Hash{}, false
}

// AnnouncedAt is the slot of rbHash, an RB accepted here that announced
// an EB.
func (p *Pipeline) AnnouncedAt(rbHash block.Hash) (slot uint64, ok bool) {
	l := p.ebs
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.byRB[rbHash]; e != nil {
		return e.Slot, true
	}
	return 0, false
}
