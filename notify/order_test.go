package notify_test

import (
	"fmt"
	"testing"

	"golang.org/x/sync/errgroup"
	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/notify"
)

// TestNoOfferBeforeAnnouncement is the ordering guarantee as a property:
// whatever the interleaving of announcements (in any order, some of them
// equivocations, some naming one EB at two slots) with LeiosDB inserts of
// the same EBs (point, body, closure — possibly before the announcement
// reached the relay), and whenever a peer connects, every peer's stream
// carries each accepted header once, and for every announced point one
// block offer after its first announcement and one block-txs offer after
// that.
func TestNoOfferBeforeAnnouncement(t *testing.T) {
	n := newTestNet(t, 2)
	rapid.Check(t, func(rt *rapid.T) {
		db := openTestDB(rt)
		r := n.relay(rt)
		runRelay(rt, r, db)

		type entry struct {
			h *block.Header
			e eb
			p block.Point
		}
		var entries []entry
		for i := range rapid.IntRange(1, 6).Draw(rt, "headers") {
			seeds := rapid.SliceOfNDistinct(rapid.Uint64Range(0, 7), 1, 3, rapid.ID).Draw(rt, fmt.Sprint("txs", i))
			e := newEB(rt, seeds...)
			slot := rapid.Uint64Range(1, 6).Draw(rt, fmt.Sprint("slot", i))
			pool := rapid.IntRange(0, 1).Draw(rt, fmt.Sprint("pool", i))
			h := n.header(slot, pool, e.announcement(), byte(i))
			entries = append(entries, entry{h: h, e: e, p: block.Point{Slot: slot, Hash: e.body.Hash()}})
		}
		announceOrder := rapid.Permutation(entries).Draw(rt, "announce order")
		storeOrder := rapid.Permutation(entries).Draw(rt, "store order")
		lateAt := rapid.IntRange(0, len(entries)).Draw(rt, "late peer after")

		taps := []*tap{newTap(rt, r)}
		late := make(chan *tap, 1)
		accepted := make(map[block.Hash]bool)
		var g errgroup.Group
		g.Go(func() error {
			for i, en := range announceOrder {
				if i == lateAt {
					late <- newTap(rt, r)
				}
				err := r.Announce(en.h)
				switch {
				case err == nil:
					accepted[en.h.Hash()] = true
				case !isViolation([]error{err}, notify.ErrEquivocation):
					return err
				}
			}
			if lateAt == len(entries) {
				late <- newTap(rt, r)
			}
			return nil
		})
		g.Go(func() error {
			for _, en := range storeOrder {
				if err := db.InsertPoint(en.p, en.e.body.Size()); err != nil {
					return err
				}
				if _, err := db.InsertBody(en.p, en.e.body.Bytes()); err != nil {
					return err
				}
				if _, err := db.InsertTxs(block.HashTxs(en.e.txs)); err != nil {
					return err
				}
			}
			return nil
		})
		if err := g.Wait(); err != nil {
			rt.Fatal(err)
		}
		taps = append(taps, <-late)

		points := make(map[block.Point]bool)
		for _, en := range entries {
			if accepted[en.h.Hash()] {
				points[en.p] = true
			}
		}
		want := len(accepted) + 2*len(points)
		for i, tp := range taps {
			tp.waitFor(rt, want)
			if err := checkStream(tp.messages(), accepted, points); err != nil {
				rt.Fatalf("peer %d: %v\nstream%s", i, err, describe(tp.messages()))
			}
		}
	})
}

// checkStream checks one peer's stream against the guarantee.
func checkStream(msgs []protocol.Message, accepted map[block.Hash]bool, points map[block.Point]bool) error {
	anns := make(map[block.Hash]bool)
	announced := make(map[block.Point]bool)
	offered := make(map[block.Point]bool)
	closures := make(map[block.Point]bool)
	for i, m := range msgs {
		switch m := m.(type) {
		case *notify.MsgBlockAnnouncement:
			h := m.Header
			if anns[h.Hash()] || !accepted[h.Hash()] {
				return fmt.Errorf("notification %d: %s repeated or never accepted", i, label(m))
			}
			anns[h.Hash()] = true
			if h.Announcement != nil {
				announced[block.Point{Slot: h.Slot, Hash: h.Announcement.EbHash}] = true
			}
		case *notify.MsgBlockOffer:
			if !announced[m.Point] || offered[m.Point] {
				return fmt.Errorf("notification %d: %s before its announcement, or repeated", i, label(m))
			}
			offered[m.Point] = true
		case *notify.MsgBlockTxsOffer:
			if !offered[m.Point] || closures[m.Point] {
				return fmt.Errorf("notification %d: %s before its block offer, or repeated", i, label(m))
			}
			closures[m.Point] = true
		default:
			return fmt.Errorf("notification %d: unexpected %s", i, label(m))
		}
	}
	if len(anns) != len(accepted) || len(closures) != len(points) {
		return fmt.Errorf("%d of %d headers, %d of %d closures offered", len(anns), len(accepted), len(closures), len(points))
	}
	return nil
}
