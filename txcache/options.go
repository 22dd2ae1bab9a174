package txcache

import "github.com/leiosnode/leiosnode/block"

const (
	// DefaultMaxAnnouncements is the bound on indexed announcements: the last 128.
	DefaultMaxAnnouncements = 128
	// DefaultTxCapacity, 4 Mi slots, holds DefaultMaxAnnouncements EBs of
	// 15,058 txs (the encoding-independent ceiling of a 512 kB body, above
	// the 13,888 of block.DefaultEBLimits) at a load factor of 0.46 — never
	// full for valid EBs. At 36 bytes a slot (SlotBytes) this is 144 MiB.
	// A load of 0.75 (2.57 Mi slots, 88 MiB) also works, with longer
	// probes: the probe of a missing key at load α reads about
	// (1 + 1/(1-α)²)/2 slots, 1.9 at 0.46 against 8.5 at 0.75, and runs
	// past the line of state words at its home more often.
	DefaultTxCapacity = 1 << 22
)

// SlotBytes is the memory of one tx-table slot: the 32-byte key and the
// 4-byte state word, which carries its tag.
const SlotBytes = 36

// Options configure a Cache. The zero value gives the defaults.
type Options struct {
	// MaxAnnouncements bounds the announcements held; one more evicts the
	// oldest (least slot, then least RB hash). Default DefaultMaxAnnouncements.
	MaxAnnouncements int
	// TxCapacity is the number of slots of the tx table, fixed at New; it
	// need not be a power of two. Keep the load (distinct txs of the inserted
	// bodies / TxCapacity) at or under 0.75. Default DefaultTxCapacity; at
	// most 2^32. The table has a probe's length (up to 1023) of extra slots.
	TxCapacity int

	// homeHook, if set, replaces the seeded hash: it returns a key's home
	// slot (taken mod TxCapacity). Tests use it to force collisions.
	homeHook func(block.Hash) uint64
	// maxProbe, if set, lowers the probe bound (default min(1024, TxCapacity)).
	maxProbe int
	// seed, if non-zero, replaces the random seed, so a failing test replays.
	seed uint64
}

func (o Options) withDefaults() Options {
	if o.MaxAnnouncements <= 0 {
		o.MaxAnnouncements = DefaultMaxAnnouncements
	}
	if o.TxCapacity <= 0 {
		o.TxCapacity = DefaultTxCapacity
	}
	o.TxCapacity = int(min(uint64(o.TxCapacity), maxSlots))
	return o
}
