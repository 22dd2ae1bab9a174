package leiosdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"

	"github.com/leiosnode/leiosnode/block"
)

// Check verifies the store in dir without writing to it: Pebble's own
// checks of every table, then CheckConsistency. A store a running node
// holds cannot be checked (pebblestore.ErrInUse). Options.Network must
// be the store's.
func Check(dir string, opts Options) error {
	db, err := open(dir, opts, true)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.store.Verify(); err != nil {
		return err
	}
	if err := db.CheckConsistency(); err != nil {
		return db.store.Corrupt(err)
	}
	return nil
}

// CheckConsistency recomputes every count and reference of the store from
// scratch and compares them with the stored ones (the invariants of the
// package doc). It reads everything, so it is for tests, for operators after
// a crash, and never for the hot path. Failures wrap ErrCorrupt.
func (db *DB) CheckConsistency() error {
	done, err := db.beginRead()
	if err != nil {
		return err
	}
	defer done()
	// The snapshot and the copy of the index in memory are taken between
	// writers, so that they show the same store. A store opened read-only
	// for a check has no index.
	db.writeMu.Lock()
	snap := db.store.NewSnapshot()
	var indexed *txIndex
	if !db.readOnly {
		index, err := db.txIndex()
		if err != nil {
			db.writeMu.Unlock()
			snap.Close()
			return err
		}
		index.mu.RLock()
		indexed = &txIndex{txs: maps.Clone(index.txs), wants: maps.Clone(index.wants)}
		index.mu.RUnlock()
	}
	db.writeMu.Unlock()
	defer snap.Close()

	c := checker{
		encoding: db.opts.Limits.Encoding,
		points:   make(map[block.Point]pointRecord),
		volatile: make(map[block.Point]bool),
		byHash:   make(map[block.Point]bool),
		named:    make(map[block.Hash]bool),
		bodies:   make(map[block.Hash][]byte),
		states:   make(map[block.Hash]bodyState),
		pins:     make(map[block.Hash]bool),
		txLens:   make(map[block.Hash]int),
	}
	if err := scanPrefix(snap, nil, c.load); err != nil {
		return err
	}
	c.check()
	if indexed != nil {
		c.checkIndex(indexed)
	}
	if len(c.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, errors.Join(c.errs...))
}

type checker struct {
	encoding      block.Encoding // the network's: what the stored bodies are in
	points        map[block.Point]pointRecord
	volatile      map[block.Point]bool
	byHash        map[block.Point]bool
	named         map[block.Hash]bool // EB hashes some point names
	bodies        map[block.Hash][]byte
	states        map[block.Hash]bodyState
	pins          map[block.Hash]bool
	txLens        map[block.Hash]int
	bodyTxs       map[block.Hash][]block.EBTx // each stored body's txs, in order
	promoted      map[block.Hash]bool         // bodies a promoted point names
	schema        uint64
	oldSchemaKeys int // 't' and 'w' entries, which only schemas 1 and 2 wrote
	errs          []error
}

const maxCheckErrors = 20

func (c *checker) fail(format string, args ...any) {
	if len(c.errs) < maxCheckErrors {
		c.errs = append(c.errs, fmt.Errorf(format, args...))
	}
}

func hashAt(k []byte, at int) (h block.Hash) {
	copy(h[:], k[at:at+hashLen])
	return h
}

// load files one key; it fails only on keys it cannot parse at all.
func (c *checker) load(k, v []byte) (bool, error) {
	var err error
	switch {
	case len(k) == pointLen && k[0] == prefixPoint:
		var rec pointRecord
		rec, err = decodePointRecord(v)
		c.points[parsePointKey(k)] = rec
	case len(k) == pointLen && k[0] == prefixVolatile:
		c.volatile[parsePointKey(k)] = true
	case len(k) == pointLen && k[0] == prefixByHash:
		p := parseByHashKey(k)
		c.byHash[p] = true
		c.named[p.Hash] = true
	case len(k) == 1+hashLen && k[0] == prefixBody:
		c.bodies[hashAt(k, 1)] = append([]byte(nil), v...)
	case len(k) == 1+hashLen && k[0] == prefixBodyState:
		c.states[hashAt(k, 1)], err = decodeBodyState(v)
	case len(k) == 1+hashLen && k[0] == prefixPin:
		c.pins[hashAt(k, 1)] = true
	case k[0] == prefixTxRef:
		c.oldSchemaKeys++ // a fault only in a store of schema 3 (check)
	case len(k) == 1+hashLen && k[0] == prefixTx:
		h := hashAt(k, 1)
		if block.HashBytes(v) != h {
			c.fail("tx %s: bytes hash to another hash", h.Short())
		}
		c.txLens[h] = len(v)
	case k[0] == prefixWant:
		c.oldSchemaKeys++ // a fault only in a store of schema 3 (check)
	case bytes.Equal(k, schemaKey):
		c.schema, _ = binary.Uvarint(v)
	case k[0] == prefixMeta:
	default:
		c.fail("unknown key %x", k)
	}
	return true, err
}

func (c *checker) check() {
	if c.schema == schemaVersion && c.oldSchemaKeys > 0 {
		c.fail("%d 't' or 'w' entries in a store of schema %d: schemas 1 and 2 wrote them, and Open deletes them", c.oldSchemaKeys, c.schema)
	}
	for p, rec := range c.points {
		if c.volatile[p] == rec.Promoted {
			c.fail("point %s: promoted=%v but volatile index entry=%v", p, rec.Promoted, c.volatile[p])
		}
		if !c.byHash[p] {
			c.fail("point %s: no by-hash index entry", p)
		}
	}
	for p := range c.volatile {
		if _, ok := c.points[p]; !ok {
			c.fail("volatile index entry %s without its point", p)
		}
	}
	for p := range c.byHash {
		if _, ok := c.points[p]; !ok {
			c.fail("by-hash index entry %s without its point", p)
		}
	}

	unlimited := block.EBLimits{MaxBodyBytes: math.MaxInt, MaxClosureBytes: math.MaxInt, MaxTxs: math.MaxInt, Encoding: c.encoding}
	c.bodyTxs = make(map[block.Hash][]block.EBTx)
	c.promoted = make(map[block.Hash]bool)
	for p, rec := range c.points {
		if rec.Promoted {
			c.promoted[p.Hash] = true
		}
	}
	named := make(map[block.Hash]bool) // txs some stored body names
	for eb, raw := range c.bodies {
		state, ok := c.states[eb]
		if !ok {
			c.fail("body %s without state", eb.Short())
		}
		if !c.named[eb] {
			c.fail("body %s named by no point", eb.Short())
		}
		if state.BodySize != uint64(len(raw)) {
			c.fail("body %s: state says %d bytes, has %d", eb.Short(), state.BodySize, len(raw))
		}
		body, err := block.DecodeEBBody(raw, unlimited)
		if err != nil {
			c.fail("body %s: %v", eb.Short(), err)
			continue
		}
		if body.Hash() != eb {
			c.fail("body %s: hashes to %s", eb.Short(), body.Hash().Short())
		}
		c.bodyTxs[eb] = body.Txs
		// A tx not stored is missing; one stored for a certified closure
		// (pinned) and named again by a volatile body may be missing too.
		var missing, mayMiss uint64
		for _, tx := range body.Txs {
			named[tx.TxHash] = true
			n, stored := c.txLens[tx.TxHash]
			pinned := c.pins[tx.TxHash]
			switch {
			case !stored:
				missing++
			case uint64(n) != uint64(tx.Size) && pinned:
				missing++ // kept for a certified closure, named again with another size
			case uint64(n) != uint64(tx.Size):
				c.fail("body %s declares %d bytes for tx %s of %d", eb.Short(), tx.Size, tx.TxHash.Short(), n)
			case c.promoted[eb] && !pinned && c.schema == schemaVersion: // older schemas had no pins
				c.fail("tx %s: stored for the promoted body %s without a pin", tx.TxHash.Short(), eb.Short())
			case pinned:
				mayMiss++ // kept for a certified closure: missing if named again
			}
		}
		if state.Missing < missing || state.Missing > missing+mayMiss {
			c.fail("body %s: missing count %d, recomputed %d (%d more at most)", eb.Short(), state.Missing, missing, mayMiss)
		}
	}
	for eb := range c.states {
		if _, ok := c.bodies[eb]; !ok {
			c.fail("body state %s without body", eb.Short())
		}
	}
	for h := range c.txLens {
		// A pin outlives a promoted body dropped for contradicting a tx's
		// size (a certified EB cannot): harmless, and never freed.
		if !named[h] && !c.pins[h] {
			c.fail("tx %s: stored, named by no body", h.Short())
		}
	}
	for h := range c.pins {
		if _, ok := c.txLens[h]; !ok {
			c.fail("tx %s: pinned, not stored", h.Short())
		}
	}
}

// checkIndex compares the index in memory with the store: each body's
// wants with what it misses, each tx's count with the volatile bodies that
// hold it.
func (c *checker) checkIndex(indexed *txIndex) {
	type txWant struct {
		tx block.Hash
		bodyWant
	}
	wanted := make(map[txWant]bool)
	for h, ws := range indexed.wants {
		for _, w := range ws {
			wanted[txWant{h, w}] = true
		}
	}
	want := make(map[block.Hash]indexedTx)
	nWants := 0
	for eb, txs := range c.bodyTxs {
		var wants uint64
		for i, tx := range txs {
			w := txWant{tx.TxHash, bodyWant{eb: eb, Offset: uint64(i), Size: uint64(tx.Size)}}
			n, stored := c.txLens[tx.TxHash]
			switch {
			case wanted[w]:
				wants++
				if stored && !c.pins[tx.TxHash] {
					c.fail("body %s: tx %d (%s) is wanted in memory, and held", eb.Short(), i, tx.TxHash.Short())
				}
			case !stored:
				c.fail("body %s: tx %d (%s) is missing, not wanted in memory", eb.Short(), i, tx.TxHash.Short())
			case !c.promoted[eb]:
				held := want[tx.TxHash]
				held.Size = uint64(n)
				held.Volatile++
				want[tx.TxHash] = held
			}
		}
		nWants += int(wants)
		if state := c.states[eb]; state.Missing != wants {
			c.fail("body %s: missing count %d, %d wanted in memory", eb.Short(), state.Missing, wants)
		}
	}
	if nWants != len(wanted) {
		c.fail("%d wants in memory, %d of them for the stored bodies", len(wanted), nWants)
	}
	for h, tx := range want {
		// Pinned in memory says a pin is stored; a pin stored before the
		// tx was named again is found when the tx leaves memory.
		got, ok := indexed.txs[h]
		tx.Pinned = got.Pinned
		if !ok || got != tx || (got.Pinned && !c.pins[h]) {
			c.fail("tx %s: indexed in memory as %+v (held %v), want %+v (pinned %v)", h.Short(), got, ok, tx, c.pins[h])
		}
	}
	for h, tx := range indexed.txs {
		if _, ok := want[h]; !ok {
			c.fail("tx %s: indexed in memory as %+v, held by no volatile body", h.Short(), tx)
		}
	}
}

// MissingClosures returns those of points whose closure the stopped store
// in dir does not hold whole, without writing to it.
func MissingClosures(dir string, opts Options, points []block.Point) ([]block.Point, error) {
	db, err := open(dir, opts, true)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var missing []block.Point
	for _, p := range points {
		info, known, err := db.PointInfo(p)
		if err != nil {
			return nil, err
		}
		if !known || !info.Complete() {
			missing = append(missing, p)
		}
	}
	return missing, nil
}
