package chaindb

import (
	"context"
	"fmt"
	"sync"

	"github.com/leiosnode/leiosnode/block"
)

// Follower follows the selected chain from a point on it, one update at a
// time, as a chain-sync server relays it. It starts at its point: the first
// update is the block after it (or a rollback, if the selection switched
// away from it meanwhile). Use a follower from one goroutine at a time.
type Follower struct {
	db   *DB
	done chan struct{} // closed by Close

	// mu guards the fields below; it is taken after DB.mu (see DB.mu).
	mu         sync.Mutex
	at         block.Tip  // the last point delivered: always on the selected chain unless rollbackTo is set
	rollbackTo *block.Tip // a pending rollback, to a point on the selected chain
	closed     bool
}

// NewFollower returns a follower positioned at from, which must be on the
// selected chain (Origin always is).
func (db *DB) NewFollower(from block.Point) (*Follower, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	n, err := db.selectedNumber(from)
	if err != nil {
		return nil, err
	}
	f := &Follower{db: db, done: make(chan struct{}), at: block.Tip{Point: from, BlockNumber: n}}
	db.regMu.Lock()
	db.followers[f] = struct{}{}
	db.regMu.Unlock()
	return f, nil
}

// TryNext returns the next update, or ok=false if the follower is at the tip.
func (f *Follower) TryNext() (block.ChainUpdate, bool, error) {
	db := f.db
	db.mu.RLock()
	defer db.mu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if db.closed || f.closed {
		return block.ChainUpdate{}, false, ErrClosed
	}
	if f.rollbackTo != nil {
		f.at, f.rollbackTo = *f.rollbackTo, nil
		return block.ChainUpdate{Kind: block.RollBackward, Point: f.at.Point}, true, nil
	}
	if f.at.BlockNumber >= db.tipNode().number {
		return block.ChainUpdate{}, false, nil
	}
	h, err := db.selectedHeader(f.at.BlockNumber + 1)
	if err != nil {
		return block.ChainUpdate{}, false, fmt.Errorf("chaindb: follower: %w", err)
	}
	f.at = block.Tip{Point: h.Point(), BlockNumber: h.BlockNumber}
	return block.ChainUpdate{Kind: block.RollForward, Header: h}, true, nil
}

// Next returns the next update, waiting for one if the follower is at the
// tip. It returns ctx's error if ctx ends first, ErrClosed if the follower
// or the database is closed.
func (f *Follower) Next(ctx context.Context) (block.ChainUpdate, error) {
	for {
		changed := f.db.TipChanged() // before TryNext, so no change is missed
		u, ok, err := f.TryNext()
		if err != nil || ok {
			return u, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return block.ChainUpdate{}, ctx.Err()
		case <-f.done:
			return block.ChainUpdate{}, ErrClosed
		case <-f.db.done:
			return block.ChainUpdate{}, ErrClosed
		}
	}
}

// Close stops the follower; a Next waiting in another goroutine returns
// ErrClosed. Closing twice is a no-op.
func (f *Follower) Close() {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.done)
	}
	f.mu.Unlock()
	f.db.regMu.Lock()
	delete(f.db.followers, f)
	f.db.regMu.Unlock()
}

// TipChanged returns a channel that is closed at the next change of the
// selection (which may also move the immutable tip). Call it again after it
// fires to wait for the one after. AddBlock never blocks on it.
func (db *DB) TipChanged() <-chan struct{} {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.tipChanged
}

// rollBackFollowers records, for every follower past to on the old
// selection, a rollback to to. Called under mu, held exclusively.
func (db *DB) rollBackFollowers(to block.Tip) {
	db.regMu.Lock()
	defer db.regMu.Unlock()
	for f := range db.followers {
		f.mu.Lock()
		pos := f.at
		if f.rollbackTo != nil {
			pos = *f.rollbackTo
		}
		if pos.BlockNumber > to.BlockNumber {
			f.rollbackTo = &to
		}
		f.mu.Unlock()
	}
}
