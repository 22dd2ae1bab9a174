package leiosdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

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
		refs:     make(map[block.Hash]txRef),
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
	encoding    block.Encoding // the network's: what the stored bodies are in
	points      map[block.Point]pointRecord
	volatile    map[block.Point]bool
	byHash      map[block.Point]bool
	named       map[block.Hash]bool // EB hashes some point names
	bodies      map[block.Hash][]byte
	states      map[block.Hash]bodyState
	refs        map[block.Hash]txRef
	txLens      map[block.Hash]int
	wants       map[block.Hash][]bodyWant   // recomputed: tx → the bodies that miss it
	bodyTxs     map[block.Hash][]block.Hash // each stored body's txs, in order
	schema      uint64
	schema1Keys int // 'w' entries, which only schema 1 wrote
	errs        []error
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
	case len(k) == 1+hashLen && k[0] == prefixTxRef:
		c.refs[hashAt(k, 1)], err = decodeTxRef(v)
	case len(k) == 1+hashLen && k[0] == prefixTx:
		h := hashAt(k, 1)
		if block.HashBytes(v) != h {
			c.fail("tx %s: bytes hash to another hash", h.Short())
		}
		c.txLens[h] = len(v)
	case k[0] == prefixWant:
		c.schema1Keys++ // a fault only in a store of schema 2 (check)
	case bytes.Equal(k, schemaKey):
		c.schema, _ = binary.Uvarint(v)
	case k[0] == prefixMeta:
	default:
		c.fail("unknown key %x", k)
	}
	return true, err
}

func (c *checker) check() {
	if c.schema != 1 && c.schema1Keys > 0 {
		c.fail("%d want entries in a store of schema %d: schema 1 wrote them, and Open deletes them", c.schema1Keys, c.schema)
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
	counted := make(map[block.Hash]uint64) // tx → stored bodies naming it
	c.wants = make(map[block.Hash][]bodyWant)
	c.bodyTxs = make(map[block.Hash][]block.Hash)
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
		var missing uint64
		for _, tx := range body.Txs {
			c.bodyTxs[eb] = append(c.bodyTxs[eb], tx.TxHash)
		}
		for i, tx := range body.Txs {
			if ref, stored := c.refs[tx.TxHash]; stored {
				counted[tx.TxHash]++
				if ref.Size != uint64(tx.Size) {
					c.fail("body %s declares %d bytes for tx %s of %d", eb.Short(), tx.Size, tx.TxHash.Short(), ref.Size)
				}
				continue
			}
			missing++
			c.wants[tx.TxHash] = append(c.wants[tx.TxHash], bodyWant{eb: eb, Offset: uint64(i), Size: uint64(tx.Size)})
		}
		if state.Missing != missing {
			c.fail("body %s: missing count %d, recomputed %d", eb.Short(), state.Missing, missing)
		}
	}
	for eb := range c.states {
		if _, ok := c.bodies[eb]; !ok {
			c.fail("body state %s without body", eb.Short())
		}
	}
	for h, ref := range c.refs {
		if ref.Refs != counted[h] || ref.Refs == 0 {
			c.fail("tx %s: refcount %d, recomputed %d", h.Short(), ref.Refs, counted[h])
		}
		n, ok := c.txLens[h]
		if !ok {
			c.fail("tx %s: ref without bytes", h.Short())
		} else if uint64(n) != ref.Size {
			c.fail("tx %s: ref says %d bytes, has %d", h.Short(), ref.Size, n)
		}
	}
	for h := range c.txLens {
		if _, ok := c.refs[h]; !ok {
			c.fail("tx %s: bytes without ref", h.Short())
		}
	}
}

// checkIndex compares the index in memory with the store: its txs with
// the 't' records of the txs volatile bodies name, its wants with those
// recomputed from the bodies.
func (c *checker) checkIndex(indexed *txIndex) {
	promoted := make(map[block.Hash]bool)
	for p, rec := range c.points {
		if rec.Promoted {
			promoted[p.Hash] = true
		}
	}
	want := make(map[block.Hash]indexedTx)
	for eb, txs := range c.bodyTxs {
		if promoted[eb] {
			continue
		}
		for _, h := range txs {
			if ref, stored := c.refs[h]; stored {
				tx := want[h]
				tx.txRef = ref
				tx.Volatile++
				want[h] = tx
			}
		}
	}
	for h, tx := range want {
		if got, ok := indexed.txs[h]; !ok || got != tx {
			c.fail("tx %s: indexed in memory as %+v (held %v), want %+v", h.Short(), got, ok, tx)
		}
	}
	for h, tx := range indexed.txs {
		if _, ok := want[h]; !ok {
			c.fail("tx %s: indexed in memory as %+v, named by no volatile body", h.Short(), tx)
		}
	}
	sortWants := func(ws []bodyWant) []bodyWant {
		return slices.SortedFunc(slices.Values(ws), func(a, b bodyWant) int { return bytes.Compare(a.eb[:], b.eb[:]) })
	}
	for h, ws := range c.wants {
		if got := indexed.wants[h]; !slices.Equal(sortWants(got), sortWants(ws)) {
			c.fail("tx %s: wanted in memory by %+v, missed by %+v", h.Short(), got, ws)
		}
	}
	for h, ws := range indexed.wants {
		if _, ok := c.wants[h]; !ok {
			c.fail("tx %s: wanted in memory by %+v, missed by no body", h.Short(), ws)
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
