package txcache

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/leiosnode/leiosnode/block"
)

// Announcement is an RB's announcement of an EB: the RB's slot and hash and
// the EB hash its header names.
type Announcement struct {
	Slot   uint64
	RbHash block.Hash
	EbHash block.Hash
}

// Point is the announced EB's point: the announcing RB's slot and the EB hash.
func (a Announcement) Point() block.Point { return block.Point{Slot: a.Slot, Hash: a.EbHash} }

// olderThan orders announcements for eviction: least slot, then least RB hash.
func olderThan(a, b Announcement) int {
	if c := cmp.Compare(a.Slot, b.Slot); c != 0 {
		return c
	}
	return bytes.Compare(a.RbHash[:], b.RbHash[:])
}

// announcementList holds announcements oldest first, at most one per
// (slot, RB hash). It stays small (MaxAnnouncements), so a sorted slice is
// the simplest ordered set.
type announcementList []Announcement

// insert adds a unless its (slot, RB hash) is present; it reports whether it did.
func (l *announcementList) insert(a Announcement) bool {
	i, found := slices.BinarySearchFunc(*l, a, olderThan)
	if found {
		return false
	}
	*l = slices.Insert(*l, i, a)
	return true
}

// popOldest removes and returns the oldest announcement; l is not empty.
func (l *announcementList) popOldest() Announcement {
	a := (*l)[0]
	*l = slices.Delete(*l, 0, 1)
	return a
}
