package leiosdb

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
)

// rawEntry is one hand-encoded EB body entry with a minimal size.
func rawEntry(tx []byte) []byte {
	h := block.HashBytes(tx)
	e := append([]byte{0x58, 0x20}, h[:]...)
	return append(e, 0x19, byte(len(tx)>>8), byte(len(tx)))
}

func TestInsertBodyRejects(t *testing.T) {
	tx1, tx2, tx3 := blocktest.Tx(1, 300), blocktest.Tx(2, 300), blocktest.Tx(3, 300)
	good := testBody(t, [][]byte{tx1, tx2})
	limits := block.EBLimits{MaxBodyBytes: 10_000, MaxClosureBytes: 800, MaxTxs: 3, Encoding: block.EncodingCIP}

	tests := []struct {
		name       string
		raw        []byte
		point      func(raw []byte) block.Point // default: slot 10, hash of raw
		size       func(raw []byte) uint64      // default: len(raw)
		noAnnounce bool
		want       error
	}{
		{name: "bad hash", raw: good.Bytes(),
			point: func([]byte) block.Point { return block.Point{Slot: 10, Hash: block.HashBytes([]byte("other"))} },
			want:  ErrHashMismatch},
		{name: "size mismatch", raw: good.Bytes(),
			size: func(raw []byte) uint64 { return uint64(len(raw)) + 1 },
			want: ErrSizeMismatch},
		{name: "unknown point", raw: good.Bytes(), noAnnounce: true, want: ErrUnknownPoint},
		{name: "duplicate tx hash",
			raw:  slices.Concat([]byte{0x81, 0xa2}, rawEntry(tx1), rawEntry(tx1)),
			want: block.ErrInvalidEB},
		{name: "non-canonical size",
			raw:  slices.Concat([]byte{0x81, 0xa1, 0x58, 0x20}, hashSlice(blocktest.Tx(4, 5)), []byte{0x18, 0x05}),
			want: block.ErrInvalidEB},
		{name: "indefinite map",
			raw:  slices.Concat([]byte{0x81, 0xbf}, rawEntry(tx1), []byte{0xff}),
			want: block.ErrInvalidEB},
		{name: "trailing bytes",
			raw:  slices.Concat([]byte{0x81, 0xa1}, rawEntry(tx1), []byte{0x00}),
			want: block.ErrInvalidEB},
		{name: "the prototype's encoding",
			raw:  testBodyIn(t, block.EncodingPrototype, [][]byte{tx1, tx2}).Bytes(),
			want: block.ErrInvalidEB},
		{name: "too many txs",
			raw:  testBody(t, [][]byte{tx1, tx2, tx3, blocktest.Tx(5, 10)}).Bytes(),
			want: block.ErrInvalidEB},
		{name: "closure too big",
			raw:  testBody(t, [][]byte{tx1, tx2, tx3, blocktest.Tx(6, 300)}[1:]).Bytes(),
			want: block.ErrInvalidEB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openTestDB(t, Options{Limits: limits})
			events, cancel := db.Subscribe()
			defer cancel()
			p := block.Point{Slot: 10, Hash: block.HashBytes(tc.raw)}
			if tc.point != nil {
				p = tc.point(tc.raw)
			}
			size := uint64(len(tc.raw))
			if tc.size != nil {
				size = tc.size(tc.raw)
			}
			if !tc.noAnnounce {
				if err := db.InsertPoint(p, size); err != nil {
					t.Fatal(err)
				}
			}
			_, err := db.InsertBody(p, tc.raw)
			if !errors.Is(err, tc.want) {
				t.Fatalf("InsertBody: %v, want %v", err, tc.want)
			}
			if body, ok, _ := db.Body(p.Hash); ok {
				t.Fatalf("rejected body stored: %x", body)
			}
			if got := drain(events); len(got) != 0 {
				t.Fatalf("events for a rejected body: %v", got)
			}
			mustConsistent(t, db)
		})
	}
}

func hashSlice(tx []byte) []byte { h := block.HashBytes(tx); return h[:] }

func TestInsertBodyTxSizeContradiction(t *testing.T) {
	db := openTestDB(t, Options{})
	tx := blocktest.Tx(1, 300)
	eb := testBody(t, [][]byte{tx})
	announceAndStore(t, db, pointOf(1, eb), eb)
	if _, err := db.InsertTxs(block.HashTxs([][]byte{tx})); err != nil {
		t.Fatal(err)
	}
	// A body that names the stored tx with another size.
	liar, err := block.NewEBBody([]block.EBTx{{TxHash: block.HashBytes(tx), Size: 301}}, block.DefaultEBLimits)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InsertPoint(pointOf(2, liar), liar.Size()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.InsertBody(pointOf(2, liar), liar.Bytes()); !errors.Is(err, ErrTxSizeMismatch) {
		t.Fatalf("InsertBody: %v, want ErrTxSizeMismatch", err)
	}
	mustConsistent(t, db)
}

func TestInsertTxsDropsContradictedBody(t *testing.T) {
	db := openTestDB(t, Options{})
	tx, other := blocktest.Tx(1, 300), blocktest.Tx(2, 300)
	honest := testBody(t, [][]byte{tx})
	liar, err := block.NewEBBody([]block.EBTx{
		{TxHash: block.HashBytes(other), Size: 300},
		{TxHash: block.HashBytes(tx), Size: 999},
	}, block.DefaultEBLimits)
	if err != nil {
		t.Fatal(err)
	}
	announceAndStore(t, db, pointOf(1, honest), honest)
	announceAndStore(t, db, pointOf(2, liar), liar)
	if _, err := db.InsertTxs(block.HashTxs([][]byte{other})); err != nil {
		t.Fatal(err)
	}
	res, err := db.InsertTxs(block.HashTxs([][]byte{tx}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Dropped, []block.Hash{liar.Hash()}) || res.Stored != 1 ||
		len(res.Completed) != 1 || res.Completed[0].Point != pointOf(1, honest) {
		t.Fatalf("InsertTxs = %+v", res)
	}
	if info := mustInfo(t, db, pointOf(2, liar)); info.HasBody {
		t.Fatalf("contradicted body still held: %+v", info)
	}
	if refcount(t, db, other) != 0 || refcount(t, db, tx) != 1 {
		t.Fatalf("refcounts: other %d, tx %d", refcount(t, db, other), refcount(t, db, tx))
	}
	mustConsistent(t, db)

	// A tx only a liar wants is not kept.
	liar2, _ := block.NewEBBody([]block.EBTx{{TxHash: block.HashBytes(blocktest.Tx(3, 50)), Size: 51}}, block.DefaultEBLimits)
	announceAndStore(t, db, pointOf(3, liar2), liar2)
	res, err = db.InsertTxs(block.HashTxs([][]byte{blocktest.Tx(3, 50)}))
	if err != nil || res.Stored != 0 || len(res.Dropped) != 1 {
		t.Fatalf("InsertTxs = %+v, %v", res, err)
	}
	mustConsistent(t, db)
}

func TestInsertPoint(t *testing.T) {
	db := openTestDB(t, Options{})
	eb := testBody(t, [][]byte{blocktest.Tx(1, 300)})
	p := pointOf(5, eb)
	if err := db.InsertPoint(p, eb.Size()); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertPoint(p, eb.Size()); err != nil {
		t.Fatalf("idempotent InsertPoint: %v", err)
	}
	if err := db.InsertPoint(p, eb.Size()+1); !errors.Is(err, ErrConflictingPoint) {
		t.Fatalf("conflicting size: %v", err)
	}
	if _, err := db.InsertBody(p, eb.Bytes()); err != nil {
		t.Fatal(err)
	}
	// Another slot announcing the held hash with a wrong size.
	if err := db.InsertPoint(block.Point{Slot: 6, Hash: eb.Hash()}, eb.Size()+1); !errors.Is(err, ErrSizeMismatch) {
		t.Fatalf("wrong size for a held body: %v", err)
	}
	info := mustInfo(t, db, p)
	if info.EbSize != eb.Size() || !info.HasBody || info.Missing != 1 || info.Promoted {
		t.Fatalf("PointInfo = %+v", info)
	}
	if _, ok, _ := db.PointInfo(block.Point{Slot: 6, Hash: eb.Hash()}); ok {
		t.Fatal("rejected point stored")
	}
	mustConsistent(t, db)
}

func TestInsertBodyAndTxs(t *testing.T) {
	db := openTestDB(t, Options{})
	txs := [][]byte{blocktest.Tx(1, 300), blocktest.Tx(2, 400), blocktest.Tx(3, 500)}
	eb := testBody(t, txs)
	p := pointOf(7, eb)
	events, cancel := db.Subscribe()
	defer cancel()

	if c := announceAndStore(t, db, p, eb); c.Missing != 3 || c.Complete() || c.Point != p {
		t.Fatalf("InsertBody = %+v", c)
	}
	if c, err := db.InsertBody(p, eb.Bytes()); err != nil || c.Missing != 3 {
		t.Fatalf("second InsertBody = %+v, %v", c, err)
	}
	if got := drain(events); !slices.Equal(got, []Event{{BodyStored, p}}) {
		t.Fatalf("events = %v", got)
	}
	body, ok, err := db.Body(eb.Hash())
	if err != nil || !ok || !bytes.Equal(body, eb.Bytes()) {
		t.Fatalf("Body = %v, %v", ok, err)
	}
	if missing, err := db.Missing(p); err != nil || !slices.Equal(missing, []int{0, 1, 2}) {
		t.Fatalf("Missing = %v, %v", missing, err)
	}

	// Two of three, with an unnamed tx and a repeat: no completion yet.
	res, err := db.InsertTxs(block.HashTxs([][]byte{txs[2], blocktest.Tx(99, 100), txs[0], txs[2]}))
	if err != nil || res.Stored != 2 || len(res.Completed) != 0 {
		t.Fatalf("InsertTxs = %+v, %v", res, err)
	}
	if _, ok, _ := db.Tx(block.HashBytes(blocktest.Tx(99, 100))); ok {
		t.Fatal("unnamed tx stored")
	}
	if missing, err := db.Missing(p); err != nil || !slices.Equal(missing, []int{1}) {
		t.Fatalf("Missing = %v, %v", missing, err)
	}
	if _, err := db.TxsByOffsets(eb.Hash(), []int{2, 1}); !errors.Is(err, ErrTxMissing) {
		t.Fatalf("TxsByOffsets of a missing tx: %v", err)
	}
	if _, err := db.Closure(eb.Hash()); !errors.Is(err, ErrTxMissing) {
		t.Fatalf("Closure of an incomplete EB: %v", err)
	}
	got, err := db.TxsByOffsets(eb.Hash(), []int{2, 0})
	if err != nil || !bytes.Equal(got[0], txs[2]) || !bytes.Equal(got[1], txs[0]) {
		t.Fatalf("TxsByOffsets = %v", err)
	}

	res, err = db.InsertTxs(block.HashTxs([][]byte{txs[1]}))
	if err != nil || res.Stored != 1 || !slices.Equal(res.Completed, []Completion{{Point: p}}) {
		t.Fatalf("InsertTxs = %+v, %v", res, err)
	}
	if got := drain(events); !slices.Equal(got, []Event{{ClosureComplete, p}}) {
		t.Fatalf("events = %v", got)
	}
	closure, err := db.Closure(eb.Hash())
	if err != nil || len(closure) != 3 {
		t.Fatalf("Closure: %v", err)
	}
	for i := range txs {
		if !bytes.Equal(closure[i], txs[i]) {
			t.Fatalf("closure tx %d differs", i)
		}
	}
	if _, err := db.TxsByOffsets(eb.Hash(), []int{3}); !errors.Is(err, ErrOffset) {
		t.Fatalf("offset out of range: %v", err)
	}
	if _, err := db.TxsByOffsets(block.HashBytes([]byte("nothing")), []int{0}); !errors.Is(err, ErrNoBody) {
		t.Fatalf("unknown body: %v", err)
	}
	if info := mustInfo(t, db, p); !info.Complete() {
		t.Fatalf("PointInfo = %+v", info)
	}
	// Txs arriving again change nothing.
	if res, err := db.InsertTxs(block.HashTxs(txs)); err != nil || res.Stored != 0 || len(res.Completed) != 0 {
		t.Fatalf("repeat InsertTxs = %+v, %v", res, err)
	}
	mustConsistent(t, db)
}

func TestEmptyBodyIsComplete(t *testing.T) {
	db := openTestDB(t, Options{})
	events, cancel := db.Subscribe()
	defer cancel()
	eb := testBody(t, nil)
	p := pointOf(1, eb)
	if c := announceAndStore(t, db, p, eb); !c.Complete() {
		t.Fatalf("empty EB: %+v", c)
	}
	if got := drain(events); !slices.Equal(got, []Event{{BodyStored, p}, {ClosureComplete, p}}) {
		t.Fatalf("events = %v", got)
	}
	mustConsistent(t, db)
}

func TestSharedTxStoredOnceCompletesBoth(t *testing.T) {
	db := openTestDB(t, Options{})
	shared := blocktest.Tx(1, 300)
	a := testBody(t, [][]byte{blocktest.Tx(2, 300), shared})
	b := testBody(t, [][]byte{shared, blocktest.Tx(3, 300)})
	pa, pb := pointOf(10, a), pointOf(11, b)
	announceAndStore(t, db, pa, a)
	announceAndStore(t, db, pb, b)
	if res, err := db.InsertTxs(block.HashTxs([][]byte{blocktest.Tx(2, 300), blocktest.Tx(3, 300)})); err != nil || len(res.Completed) != 0 {
		t.Fatalf("InsertTxs = %+v, %v", res, err)
	}
	res, err := db.InsertTxs(block.HashTxs([][]byte{shared}))
	if err != nil || res.Stored != 1 || !slices.Equal(res.Completed, sortCompletions([]Completion{{Point: pa}, {Point: pb}})) {
		t.Fatalf("InsertTxs = %+v, %v", res, err)
	}
	if n := refcount(t, db, shared); n != 2 {
		t.Fatalf("shared tx refcount %d, want 2", n)
	}
	// A third body naming the stored tx counts it as held at once.
	c := testBody(t, [][]byte{shared})
	if got := announceAndStore(t, db, pointOf(12, c), c); !got.Complete() {
		t.Fatalf("InsertBody = %+v", got)
	}
	if n := refcount(t, db, shared); n != 3 {
		t.Fatalf("shared tx refcount %d, want 3", n)
	}
	mustConsistent(t, db)
}

// sortCompletions orders completions as InsertTxs reports them.
func sortCompletions(cs []Completion) []Completion {
	slices.SortFunc(cs, func(a, b Completion) int {
		if c := bytes.Compare(a.Point.Hash[:], b.Point.Hash[:]); c != 0 {
			return c
		}
		return int(a.Point.Slot) - int(b.Point.Slot)
	})
	return cs
}

func TestSameEBHashAtTwoSlots(t *testing.T) {
	db := openTestDB(t, Options{})
	events, cancel := db.Subscribe()
	defer cancel()
	tx := blocktest.Tx(1, 300)
	eb := testBody(t, [][]byte{tx})
	p1, p2, p3 := pointOf(10, eb), pointOf(20, eb), pointOf(30, eb)
	if err := db.InsertPoint(p1, eb.Size()); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertPoint(p2, eb.Size()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.InsertBody(p1, eb.Bytes()); err != nil {
		t.Fatal(err)
	}
	if got := drain(events); !slices.Equal(got, []Event{{BodyStored, p1}, {BodyStored, p2}}) {
		t.Fatalf("events = %v", got)
	}
	if c, err := db.InsertBody(p2, eb.Bytes()); err != nil || c.Missing != 1 {
		t.Fatalf("InsertBody at the second slot = %+v, %v", c, err)
	}
	res, err := db.InsertTxs(block.HashTxs([][]byte{tx}))
	if err != nil || len(res.Completed) != 2 {
		t.Fatalf("InsertTxs = %+v, %v", res, err)
	}
	if got := drain(events); !slices.Equal(got, []Event{{ClosureComplete, p1}, {ClosureComplete, p2}}) {
		t.Fatalf("events = %v", got)
	}
	// Announced after the closure is held: offered at once.
	if err := db.InsertPoint(p3, eb.Size()); err != nil {
		t.Fatal(err)
	}
	if got := drain(events); !slices.Equal(got, []Event{{BodyStored, p3}, {ClosureComplete, p3}}) {
		t.Fatalf("events = %v", got)
	}

	// GC of the first point keeps the body for the others.
	if st, err := db.GC(15); err != nil || st != (GCStats{Points: 1}) {
		t.Fatalf("GC = %+v, %v", st, err)
	}
	if _, ok, _ := db.Body(eb.Hash()); !ok {
		t.Fatal("shared body dropped")
	}
	mustConsistent(t, db)
	if st, err := db.GC(31); err != nil || st != (GCStats{Points: 2, Bodies: 1, Txs: 1}) {
		t.Fatalf("GC = %+v, %v", st, err)
	}
	if _, ok, _ := db.Body(eb.Hash()); ok {
		t.Fatal("unnamed body kept")
	}
	mustConsistent(t, db)
}

func TestGCKeepsSharedTxsOfYoungerEB(t *testing.T) {
	db := openTestDB(t, Options{})
	shared, oldOnly, missing := blocktest.Tx(1, 300), blocktest.Tx(2, 300), blocktest.Tx(3, 300)
	old := testBody(t, [][]byte{oldOnly, shared, missing})
	young := testBody(t, [][]byte{shared})
	announceAndStore(t, db, pointOf(10, old), old)
	announceAndStore(t, db, pointOf(20, young), young)
	if _, err := db.InsertTxs(block.HashTxs([][]byte{shared, oldOnly})); err != nil {
		t.Fatal(err)
	}
	st, err := db.GC(20)
	if err != nil || st != (GCStats{Points: 1, Bodies: 1, Txs: 1}) {
		t.Fatalf("GC = %+v, %v", st, err)
	}
	var present [3]bool
	if n, err := db.HasTxs([]block.Hash{block.HashBytes(shared), block.HashBytes(oldOnly), block.HashBytes(missing)}, present[:]); err != nil || n != 1 {
		t.Fatalf("HasTxs = %d, %v", n, err)
	}
	if present != [3]bool{true, false, false} {
		t.Fatalf("HasTxs = %v", present)
	}
	if refcount(t, db, shared) != 1 {
		t.Fatalf("shared refcount %d", refcount(t, db, shared))
	}
	if info := mustInfo(t, db, pointOf(20, young)); !info.Complete() {
		t.Fatalf("young EB: %+v", info)
	}
	// The dropped body's want for the missing tx is gone: it is now unnamed.
	if res, _ := db.InsertTxs(block.HashTxs([][]byte{missing})); res.Stored != 0 {
		t.Fatal("tx of a collected EB stored")
	}
	mustConsistent(t, db)
}

func TestPromoteSurvivesGC(t *testing.T) {
	db := openTestDB(t, Options{})
	tx := blocktest.Tx(1, 300)
	eb := testBody(t, [][]byte{tx})
	p := pointOf(10, eb)
	announceAndStore(t, db, p, eb)
	if _, err := db.InsertTxs(block.HashTxs([][]byte{tx})); err != nil {
		t.Fatal(err)
	}
	if err := db.Promote(block.Point{Slot: 11, Hash: eb.Hash()}); !errors.Is(err, ErrUnknownPoint) {
		t.Fatalf("Promote unknown: %v", err)
	}
	if err := db.Promote(p); err != nil {
		t.Fatal(err)
	}
	if err := db.Promote(p); err != nil {
		t.Fatalf("second Promote: %v", err)
	}
	if st, err := db.GC(1000); err != nil || st != (GCStats{}) {
		t.Fatalf("GC = %+v, %v", st, err)
	}
	if info := mustInfo(t, db, p); !info.Promoted || !info.Complete() {
		t.Fatalf("promoted EB after GC: %+v", info)
	}
	if closure, err := db.Closure(eb.Hash()); err != nil || !bytes.Equal(closure[0], tx) {
		t.Fatalf("Closure: %v", err)
	}
	mustConsistent(t, db)
}

func TestGCDropsAnnouncementsWithoutBody(t *testing.T) {
	db := openTestDB(t, Options{})
	eb := testBody(t, [][]byte{blocktest.Tx(1, 300)})
	for slot := uint64(1); slot <= 5; slot++ {
		if err := db.InsertPoint(block.Point{Slot: slot, Hash: block.HashBytes([]byte{byte(slot)})}, 100); err != nil {
			t.Fatal(err)
		}
	}
	announceAndStore(t, db, pointOf(6, eb), eb)
	if st, err := db.GC(4); err != nil || st != (GCStats{Points: 3}) {
		t.Fatalf("GC = %+v, %v", st, err)
	}
	infos, err := db.Points(0)
	if err != nil || len(infos) != 3 || infos[0].Point.Slot != 4 || !infos[2].HasBody {
		t.Fatalf("Points = %+v, %v", infos, err)
	}
	if _, err := db.Missing(infos[0].Point); !errors.Is(err, ErrNoBody) {
		t.Fatalf("Missing without body: %v", err)
	}
	if _, err := db.Missing(block.Point{Slot: 1}); !errors.Is(err, ErrUnknownPoint) {
		t.Fatalf("Missing of a collected point: %v", err)
	}
	mustConsistent(t, db)
}

func TestSubscriberCutOffWhenFull(t *testing.T) {
	db := openTestDB(t, Options{EventBuffer: 2})
	reader, cancel := db.Subscribe()
	defer cancel()
	sleeper, _ := db.Subscribe() // never reads
	eb := testBody(t, nil)       // an empty EB: BodyStored and ClosureComplete at once
	announceAndStore(t, db, pointOf(1, eb), eb)
	if got := drain(reader); len(got) != 2 {
		t.Fatalf("reader got %v", got)
	}
	// Two more events: the reader has room, the sleeper does not.
	if err := db.InsertPoint(pointOf(2, eb), eb.Size()); err != nil {
		t.Fatal(err)
	}
	want := []Event{{BodyStored, pointOf(2, eb)}, {ClosureComplete, pointOf(2, eb)}}
	if got := drain(reader); !slices.Equal(got, want) {
		t.Fatalf("reader got %v, want %v", got, want)
	}
	var got []Event
	for e := range sleeper { // ends: the sleeper was cut off
		got = append(got, e)
	}
	if len(got) != 2 || got[0].Point.Slot != 1 {
		t.Fatalf("sleeper kept %v", got)
	}
	select {
	case e, ok := <-reader:
		t.Fatalf("reader: unexpected %v, %v", e, ok)
	default: // still subscribed, nothing pending
	}
}

// TestConcurrentReadersAndWriters runs the fetch server's reads and the
// probe against inserts and GC (for -race): reads see whole batches only.
func TestConcurrentReadersAndWriters(t *testing.T) {
	db := openTestDB(t, Options{})
	var g errgroup.Group
	type ebTxs struct {
		eb  *block.EBBody
		txs [][]byte
	}
	published := make(chan ebTxs, 64) // room for every send: the writer never waits
	g.Go(func() error {
		defer close(published)
		for slot := uint64(1); slot <= 60; slot++ {
			txs := [][]byte{blocktest.Tx(slot, 200), blocktest.Tx(slot+1, 200), blocktest.Tx(slot+1000, 300)}
			eb := testBody(t, txs)
			if err := db.InsertPoint(pointOf(slot, eb), eb.Size()); err != nil {
				return err
			}
			if _, err := db.InsertBody(pointOf(slot, eb), eb.Bytes()); err != nil {
				return err
			}
			if _, err := db.InsertTxs(block.HashTxs(txs)); err != nil {
				return err
			}
			if slot%10 == 0 {
				if _, err := db.GC(slot - 5); err != nil {
					return err
				}
			}
			published <- ebTxs{eb, txs}
		}
		return nil
	})
	for range 2 {
		g.Go(func() error {
			for e := range published {
				hashes := []block.Hash{block.HashBytes(e.txs[0]), block.HashBytes(e.txs[2])}
				out := make([]bool, 2)
				if _, err := db.HasTxs(hashes, out); err != nil {
					return err
				}
				closure, err := db.Closure(e.eb.Hash())
				if errors.Is(err, ErrNoBody) || errors.Is(err, ErrTxMissing) {
					continue // collected meanwhile
				}
				if err != nil {
					return err
				}
				for i := range closure {
					if !bytes.Equal(closure[i], e.txs[i]) {
						return fmt.Errorf("closure tx %d differs", i)
					}
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	mustConsistent(t, db)
}

func TestReopenAndClose(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	tx := blocktest.Tx(1, 300)
	eb := testBody(t, [][]byte{tx})
	announceAndStore(t, db, pointOf(1, eb), eb)
	if _, err := db.InsertTxs(block.HashTxs([][]byte{tx})); err != nil {
		t.Fatal(err)
	}
	events, _ := db.Subscribe()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-events; ok {
		t.Fatal("subscription open after Close")
	}
	if _, err := db.InsertTxs(block.HashTxs([][]byte{tx})); !errors.Is(err, ErrClosed) {
		t.Fatalf("InsertTxs after Close: %v", err)
	}
	if _, _, err := db.Body(eb.Hash()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Body after Close: %v", err)
	}

	db, err = Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if info := mustInfo(t, db, pointOf(1, eb)); !info.Complete() {
		t.Fatalf("after reopen: %+v", info)
	}
	mustConsistent(t, db)
}

func TestHasTxsLengthMismatch(t *testing.T) {
	db := openTestDB(t, Options{})
	if _, err := db.HasTxs(make([]block.Hash, 2), make([]bool, 1)); err == nil {
		t.Fatal("HasTxs accepted a short result slice")
	}
}

func TestDropPageCache(t *testing.T) {
	db := openTestDB(t, Options{})
	tx := blocktest.Tx(1, 300)
	eb := testBody(t, [][]byte{tx})
	announceAndStore(t, db, pointOf(1, eb), eb)
	if err := db.DropPageCache(); err != nil {
		t.Fatal(err)
	}
	files, err := Files(db.Dir())
	if err != nil || len(files) == 0 {
		t.Fatalf("Files = %v, %v", files, err)
	}
	var out [1]bool
	if n, err := db.HasTxs([]block.Hash{block.HashBytes(tx)}, out[:]); err != nil || n != 0 {
		t.Fatalf("HasTxs after dropping the page cache = %d, %v", n, err)
	}
}

// FuzzStoredTxs checks the fast reader of stored bodies against the
// validating decoder: on every body DecodeEBBody accepts, in either
// encoding, storedTxs gives the same entries.
func FuzzStoredTxs(f *testing.F) {
	for _, enc := range []block.Encoding{block.EncodingCIP, block.EncodingPrototype} {
		f.Add(testBodyIn(f, enc, nil).Bytes())
		f.Add(testBodyIn(f, enc, [][]byte{blocktest.Tx(1, 3), blocktest.Tx(2, 30), blocktest.Tx(3, 300), blocktest.Tx(4, 60_000)}).Bytes())
	}
	f.Add(testBodyIn(f, block.EncodingPrototype, [][]byte{blocktest.Tx(4, 70_000)}).Bytes())
	f.Add(slices.Concat([]byte{0xa2}, rawEntry(blocktest.Tx(1, 300)), rawEntry(blocktest.Tx(1, 300))))
	f.Add([]byte{0xbf, 0xff})
	f.Add([]byte{0x81, 0xbf, 0xff})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var eb *block.EBBody
		for _, enc := range []block.Encoding{block.EncodingCIP, block.EncodingPrototype} {
			if body, err := block.DecodeEBBody(raw, block.EBLimits{MaxBodyBytes: 1 << 20, MaxClosureBytes: 1 << 40, MaxTxs: 1 << 16, Encoding: enc}); err == nil {
				eb = body
			}
		}
		if eb == nil {
			return
		}
		got, err := storedTxs(raw)
		if err != nil {
			t.Fatalf("storedTxs rejects a valid body: %v", err)
		}
		if !slices.Equal(got, eb.Txs) {
			t.Fatalf("storedTxs = %v, DecodeEBBody = %v", got, eb.Txs)
		}
	})
}
