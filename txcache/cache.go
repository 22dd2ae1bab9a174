package txcache

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"sync"

	"github.com/leiosnode/leiosnode/block"
)

// ErrNotAnnounced refuses a body that no held announcement names: the
// announcement was never inserted (the ordering contract was broken) or has
// been evicted since.
var ErrNotAnnounced = errors.New("txcache: EB body not announced")

// Cache is the LeiosTxCache. All methods are safe for concurrent use.
type Cache struct {
	maxAnnouncements int
	txs              *table

	// writeMu serializes the writers: every method that changes the cache
	// holds it for the whole call. Readers never take it; tx lookups take no
	// lock at all (see table).
	writeMu sync.Mutex

	// floor is the last EvictOlderThan slot: older announcements are
	// refused. Guarded by writeMu.
	floor uint64

	// bodiesMu guards announcements and bodies (and the bodies' fields)
	// against readers. A writer holds writeMu and takes bodiesMu only around
	// its changes to them, never across tx-table work, so a reader waits at
	// most for one small map update. Writers, being serialized, read them
	// without it. Lock order: writeMu, then bodiesMu.
	bodiesMu      sync.RWMutex
	announcements announcementList
	bodies        map[block.Hash]*body
}

// body is an announced EB.
type body struct {
	state BodyState
	refs  int // held announcements naming it
	// txs are the tx hashes this body counted in the table: all of its txs,
	// less any the table had no room for. Eviction releases exactly these.
	txs []block.Hash
}

// New returns an empty cache. Its hash seed is drawn from crypto/rand.
func New(opts Options) *Cache {
	opts = opts.withDefaults()
	seed := opts.seed
	if seed == 0 {
		var b [8]byte
		rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
		seed = binary.LittleEndian.Uint64(b[:])
	}
	return &Cache{
		maxAnnouncements: opts.MaxAnnouncements,
		txs: newTable(uint64(opts.TxCapacity), uint64(max(opts.maxProbe, 0)),
			seed, opts.homeHook),
		bodies: make(map[block.Hash]*body),
	}
}

// InsertAnnouncement records that the RB (slot, rbHash) announces ebHash.
// Over MaxAnnouncements it evicts the oldest, cascading to bodies and txs no
// longer named. It reports whether the announcement is held afterwards: a
// repeated (slot, rbHash), one older than the last EvictOlderThan, and one
// that is itself the oldest over the limit are not.
func (c *Cache) InsertAnnouncement(slot uint64, rbHash, ebHash block.Hash) bool {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if slot < c.floor {
		return false
	}
	a := Announcement{Slot: slot, RbHash: rbHash, EbHash: ebHash}
	c.bodiesMu.Lock()
	held := c.announcements.insert(a)
	if held {
		b := c.bodies[ebHash]
		if b == nil {
			b = &body{state: BodyNotYetInserted}
			c.bodies[ebHash] = b
		}
		b.refs++
	}
	var dead []*body
	for len(c.announcements) > c.maxAnnouncements {
		old := c.announcements.popOldest()
		held = held && old != a
		dead = c.unref(old, dead)
	}
	c.bodiesMu.Unlock()
	c.release(dead)
	return held
}

// EvictOlderThan drops every announcement older than slot, cascading, and
// refuses older announcements from then on. Call it when the immutable tip
// advances, before the LeiosDB GC (the ordering contract).
func (c *Cache) EvictOlderThan(slot uint64) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.floor = max(c.floor, slot)
	c.bodiesMu.Lock()
	var dead []*body
	for len(c.announcements) > 0 && c.announcements[0].Slot < slot {
		dead = c.unref(c.announcements.popOldest(), dead)
	}
	c.bodiesMu.Unlock()
	c.release(dead)
}

// unref drops a's reference to its body, removing a body left unnamed and
// appending it to dead if its txs need releasing. bodiesMu is held.
func (c *Cache) unref(a Announcement, dead []*body) []*body {
	b := c.bodies[a.EbHash]
	if b.refs--; b.refs > 0 {
		return dead
	}
	delete(c.bodies, a.EbHash)
	if b.state == BodyInserted {
		dead = append(dead, b)
	}
	return dead
}

// release drops the tx references of evicted bodies. writeMu is held.
func (c *Cache) release(dead []*body) {
	for _, b := range dead {
		c.txs.releaseAll(b.txs)
	}
}

// InsertBody indexes the txs of an announced EB (as decoded, in EB order) and
// returns, from the same pass, the indexes into txs of those not held — the
// fetch logic's missing set for this EB. Txs the full table cannot hold are
// among them (false misses). Inserting a body again changes nothing and
// returns its current missing set. A body no held announcement names is
// refused with ErrNotAnnounced.
//
// The body must already be in the LeiosDB (the ordering contract).
func (c *Cache) InsertBody(ebHash block.Hash, txs []block.EBTx) (missing []int, err error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	b := c.bodies[ebHash]
	if b == nil {
		return nil, ErrNotAnnounced
	}
	if b.state == BodyInserted {
		return c.txs.appendMissing(nil, txs), nil
	}
	hashes := make([]block.Hash, len(txs))
	for i := range txs {
		hashes[i] = txs[i].TxHash
	}
	counted, missing := c.txs.addRefs(hashes)
	c.bodiesMu.Lock()
	b.state, b.txs = BodyInserted, hashes[:counted]
	c.bodiesMu.Unlock()
	return missing, nil
}

// MarkInserted records that these txs are now in the LeiosDB (insert them
// there first: the ordering contract) and reports per tx what it did.
func (c *Cache) MarkInserted(txHashes []block.Hash) []MarkResult {
	return c.mark(txHashes, TxInserted)
}

// MarkValidated records that these txs are in the LeiosDB and validated. A
// tx may go straight from not-yet-inserted to validated (the forge's own).
func (c *Cache) MarkValidated(txHashes []block.Hash) []MarkResult {
	return c.mark(txHashes, TxValidated)
}

func (c *Cache) mark(txHashes []block.Hash, to TxState) []MarkResult {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.txs.markAll(txHashes, to)
}

// LookupBody reports the state of an announced EB's body; ok is false if no
// held announcement names it.
func (c *Cache) LookupBody(ebHash block.Hash) (state BodyState, ok bool) {
	c.bodiesMu.RLock()
	defer c.bodiesMu.RUnlock()
	b := c.bodies[ebHash]
	if b == nil {
		return 0, false
	}
	return b.state, true
}

// LookupTx reports what the cache holds for a tx; ok is false (and the state
// TxAbsent) if it holds nothing. It takes no lock.
func (c *Cache) LookupTx(txHash block.Hash) (state TxState, ok bool) {
	k := keyOf(&txHash)
	home, tag := c.txs.start(&k)
	state = stateKind(c.txs.lookup(&k, home, tag))
	return state, state != TxAbsent
}

// LookupTxs sets out[i] to the state of txHashes[i] and returns how many are
// held (TxState.Held): the rest must be fetched. out must be at least as long
// as txHashes. It takes no lock; a batch is much faster per tx than LookupTx.
func (c *Cache) LookupTxs(txHashes []block.Hash, out []TxState) (held int) {
	return c.txs.lookupBatch(txHashes, out)
}

// AppendMissing appends to dst the index of every tx of txs that is not
// held — "which of this EB's txs must I still fetch?" — and returns it. It
// takes no lock.
func (c *Cache) AppendMissing(dst []int, txs []block.EBTx) []int {
	return c.txs.appendMissing(dst, txs)
}
