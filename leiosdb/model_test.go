package leiosdb

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/block/blocktest"
)

// model is the store's meaning, in plain maps. A body holds the txs that
// were held for a volatile body when it arrived, and those that arrived
// after it; a tx stays stored while a volatile body holds it or a promoted
// body held it (its pin). A tx kept only for promoted bodies is missing for
// a body that names it again (a certified tx named again: an invalid EB).
type model struct {
	points    map[block.Point]modelPoint
	bodies    map[block.Hash]*block.EBBody // held
	missingAt map[block.Hash]map[int]bool  // held body → offsets it misses
	txs       map[block.Hash][]byte        // stored
	pinned    map[block.Hash]bool
}

type modelPoint struct {
	size     uint64
	promoted bool
}

// volatile reports whether no promoted point names the body eb.
func (m *model) volatile(eb block.Hash) bool {
	for p, mp := range m.points {
		if p.Hash == eb && mp.promoted {
			return false
		}
	}
	return true
}

// indexed reports whether a volatile body holds the stored tx h.
func (m *model) indexed(h block.Hash) bool {
	for eb, body := range m.bodies {
		if !m.volatile(eb) {
			continue
		}
		for i, tx := range body.Txs {
			if tx.TxHash == h && !m.missingAt[eb][i] {
				return true
			}
		}
	}
	return false
}

func (m *model) missing(eb *block.EBBody) int { return len(m.missingAt[eb.Hash()]) }

// held and complete are the point sets the events announce.
func (m *model) held() map[block.Point]bool {
	s := make(map[block.Point]bool)
	for p, mp := range m.points {
		if eb, ok := m.bodies[p.Hash]; ok && eb.Size() == mp.size {
			s[p] = true
		}
	}
	return s
}

func (m *model) complete() map[block.Point]bool {
	s := m.held()
	for p := range s {
		if m.missing(m.bodies[p.Hash]) != 0 {
			delete(s, p)
		}
	}
	return s
}

// dropUnkept deletes the stored txs no volatile body holds and no pin keeps.
func (m *model) dropUnkept() int {
	n := 0
	for h := range m.txs {
		if !m.indexed(h) && !m.pinned[h] {
			delete(m.txs, h)
			n++
		}
	}
	return n
}

func (m *model) insertPoint(p block.Point, size uint64) error {
	if mp, ok := m.points[p]; ok {
		if mp.size != size {
			return ErrConflictingPoint
		}
		return nil
	}
	if eb, ok := m.bodies[p.Hash]; ok && eb.Size() != size {
		return ErrSizeMismatch
	}
	m.points[p] = modelPoint{size: size}
	return nil
}

func (m *model) insertBody(p block.Point, eb *block.EBBody) (int, error) {
	mp, ok := m.points[p]
	switch {
	case !ok:
		return 0, ErrUnknownPoint
	case mp.size != eb.Size():
		return 0, ErrSizeMismatch
	case eb.Hash() != p.Hash:
		return 0, ErrHashMismatch
	}
	if held, ok := m.bodies[p.Hash]; ok {
		return m.missing(held), nil
	}
	missing := make(map[int]bool)
	for i, tx := range eb.Txs {
		if !m.indexed(tx.TxHash) {
			missing[i] = true
		} else if len(m.txs[tx.TxHash]) != int(tx.Size) {
			return 0, ErrTxSizeMismatch
		}
	}
	m.bodies[p.Hash], m.missingAt[p.Hash] = eb, missing
	if !m.volatile(p.Hash) {
		for i, tx := range eb.Txs {
			if !missing[i] {
				m.pinned[tx.TxHash] = true
			}
		}
	}
	return len(missing), nil
}

// wanting returns the offsets at which the held body eb misses tx h.
func (m *model) wanting(h block.Hash, eb block.Hash) (offsets []int) {
	for i, tx := range m.bodies[eb].Txs {
		if tx.TxHash == h && m.missingAt[eb][i] {
			offsets = append(offsets, i)
		}
	}
	return offsets
}

func (m *model) insertTxs(txs [][]byte) (completed []Completion, stored int, dropped []block.Hash) {
	before := make(map[block.Hash]int)
	for h, eb := range m.bodies {
		before[h] = m.missing(eb)
	}
	bad := make(map[block.Hash]bool)
	for _, tx := range txs {
		h := block.HashBytes(tx)
		for eb, body := range m.bodies {
			for _, i := range m.wanting(h, eb) {
				if int(body.Txs[i].Size) != len(tx) {
					bad[eb] = true
				}
			}
		}
	}
	done := make(map[block.Hash]bool)
	for _, tx := range txs {
		h := block.HashBytes(tx)
		if done[h] {
			continue
		}
		done[h] = true
		good, pin := false, false
		for eb := range m.bodies {
			if !bad[eb] && len(m.wanting(h, eb)) > 0 {
				good = true
				pin = pin || !m.volatile(eb)
			}
		}
		if !good {
			continue
		}
		stored++
		m.txs[h] = tx
		if pin {
			m.pinned[h] = true
		}
		for eb := range m.bodies {
			for _, i := range m.wanting(h, eb) {
				delete(m.missingAt[eb], i)
			}
		}
	}
	for h := range bad {
		delete(m.bodies, h)
		delete(m.missingAt, h)
		dropped = append(dropped, h)
	}
	m.dropUnkept()
	for h, eb := range m.bodies {
		if before[h] > 0 && m.missing(eb) == 0 {
			for p, mp := range m.points {
				if p.Hash == h && mp.size == eb.Size() {
					completed = append(completed, Completion{Point: p})
				}
			}
		}
	}
	slices.SortFunc(dropped, func(a, b block.Hash) int { return slices.Compare(a[:], b[:]) })
	return sortCompletions(completed), stored, dropped
}

func (m *model) promote(p block.Point) error {
	mp, ok := m.points[p]
	if !ok {
		return ErrUnknownPoint
	}
	if body, held := m.bodies[p.Hash]; held && m.volatile(p.Hash) {
		for i, tx := range body.Txs {
			if !m.missingAt[p.Hash][i] {
				m.pinned[tx.TxHash] = true
			}
		}
	}
	mp.promoted = true
	m.points[p] = mp
	m.dropUnkept()
	return nil
}

func (m *model) gc(slot uint64) GCStats {
	var st GCStats
	for p, mp := range m.points {
		if p.Slot < slot && !mp.promoted {
			delete(m.points, p)
			st.Points++
		}
	}
	for h := range m.bodies {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(m.points)), func(p block.Point) bool { return p.Hash == h }) {
			delete(m.bodies, h)
			delete(m.missingAt, h)
			st.Bodies++
		}
	}
	st.Txs = m.dropUnkept()
	return st
}

// TestStateMachine drives the store and the model with the same random
// operations and compares every result, the events, every point's info and
// the membership of every tx, with a full consistency check after each step.
func TestStateMachine(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		// A small universe, so that bodies share txs and hashes repeat.
		var pool [][]byte
		for i := range 10 {
			pool = append(pool, blocktest.Tx(uint64(i), 20+10*i))
		}
		var bodies []*block.EBBody
		for i := range 5 {
			txs := rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 0, 5, func(tx []byte) string { return string(tx) }).
				Draw(rt, fmt.Sprintf("body%d", i))
			entries := make([]block.EBTx, len(txs))
			for j, tx := range txs {
				entries[j] = block.EBTx{TxHash: block.HashBytes(tx), Size: uint32(len(tx))}
			}
			if len(entries) > 0 && rapid.IntRange(0, 5).Draw(rt, fmt.Sprintf("liar%d", i)) == 0 {
				entries[0].Size++ // declares a wrong size: dropped when that tx arrives
			}
			eb, err := block.NewEBBody(entries, block.DefaultEBLimits)
			if err != nil {
				rt.Fatal(err)
			}
			bodies = append(bodies, eb)
		}

		dir, err := os.MkdirTemp("", "leiosdb-model-")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		db, err := Open(dir, Options{Logger: quietLogger(), CacheBytes: 1 << 20, MemTableBytes: 1 << 20, EventBuffer: 1 << 12})
		if err != nil {
			rt.Fatal(err)
		}
		defer db.Close()
		events, cancel := db.Subscribe()
		defer cancel()

		m := &model{
			points:    make(map[block.Point]modelPoint),
			bodies:    make(map[block.Hash]*block.EBBody),
			missingAt: make(map[block.Hash]map[int]bool),
			txs:       make(map[block.Hash][]byte),
			pinned:    make(map[block.Hash]bool),
		}
		genPoint := rapid.Custom(func(rt *rapid.T) block.Point {
			eb := rapid.SampledFrom(bodies).Draw(rt, "eb")
			return block.Point{Slot: rapid.Uint64Range(0, 12).Draw(rt, "slot"), Hash: eb.Hash()}
		})
		bodyOf := func(h block.Hash) *block.EBBody {
			for _, eb := range bodies {
				if eb.Hash() == h {
					return eb
				}
			}
			panic("unknown body")
		}
		knownPoint := func(rt *rapid.T) block.Point {
			if len(m.points) > 0 && rapid.IntRange(0, 4).Draw(rt, "known") > 0 {
				points := slices.SortedFunc(maps.Keys(m.points), comparePoints)
				return rapid.SampledFrom(points).Draw(rt, "point")
			}
			return genPoint.Draw(rt, "point")
		}

		prevHeld, prevComplete := m.held(), m.complete()
		rt.Repeat(map[string]func(*rapid.T){
			"InsertPoint": func(rt *rapid.T) {
				p := genPoint.Draw(rt, "p")
				size := bodyOf(p.Hash).Size() + rapid.Uint64Range(0, 1).Draw(rt, "lie")
				wantErr := m.insertPoint(p, size)
				expectErr(rt, db.InsertPoint(p, size), wantErr)
			},
			"InsertBody": func(rt *rapid.T) {
				p := knownPoint(rt)
				eb := bodyOf(p.Hash)
				if rapid.IntRange(0, 5).Draw(rt, "wrongBody") == 0 {
					eb = rapid.SampledFrom(bodies).Draw(rt, "other")
				}
				want, wantErr := m.insertBody(p, eb)
				got, err := db.InsertBody(p, eb.Bytes())
				expectErr(rt, err, wantErr)
				if err == nil && (got.Missing != want || got.Point != p) {
					rt.Fatalf("InsertBody = %+v, model missing %d", got, want)
				}
			},
			"InsertTxs": func(rt *rapid.T) {
				txs := rapid.SliceOfN(rapid.SampledFrom(pool), 1, 6).Draw(rt, "txs")
				completed, stored, dropped := m.insertTxs(txs)
				res, err := db.InsertTxs(block.HashTxs(txs))
				if err != nil {
					rt.Fatal(err)
				}
				if !slices.Equal(res.Completed, completed) || res.Stored != stored || !slices.Equal(res.Dropped, dropped) {
					rt.Fatalf("InsertTxs = %+v, model completed %v stored %d dropped %v", res, completed, stored, dropped)
				}
			},
			"GC": func(rt *rapid.T) {
				slot := rapid.Uint64Range(0, 13).Draw(rt, "slot")
				want := m.gc(slot)
				got, err := db.GC(slot)
				if err != nil || got != want {
					rt.Fatalf("GC(%d) = %+v, %v; model %+v", slot, got, err, want)
				}
			},
			"Promote": func(rt *rapid.T) {
				p := knownPoint(rt)
				expectErr(rt, db.Promote(p), m.promote(p))
			},
			"": func(rt *rapid.T) {
				checkAgainstModel(rt, db, m, pool)
				held, complete := m.held(), m.complete()
				checkEvents(rt, drain(events), prevHeld, held, prevComplete, complete)
				prevHeld, prevComplete = held, complete
			},
		})
	})
}

func comparePoints(a, b block.Point) int {
	if a.Slot != b.Slot {
		if a.Slot < b.Slot {
			return -1
		}
		return 1
	}
	return slices.Compare(a.Hash[:], b.Hash[:])
}

func expectErr(rt *rapid.T, got, want error) {
	rt.Helper()
	if (got == nil) != (want == nil) || (want != nil && !errors.Is(got, want)) {
		rt.Fatalf("error %v, model says %v", got, want)
	}
}

func checkAgainstModel(rt *rapid.T, db *DB, m *model, pool [][]byte) {
	rt.Helper()
	if err := db.CheckConsistency(); err != nil {
		rt.Fatal(err)
	}
	infos, err := db.Points(0)
	if err != nil {
		rt.Fatal(err)
	}
	if len(infos) != len(m.points) {
		rt.Fatalf("%d points, model %d", len(infos), len(m.points))
	}
	held := m.held()
	for _, info := range infos {
		mp, ok := m.points[info.Point]
		if !ok || mp.size != info.EbSize || mp.promoted != info.Promoted || held[info.Point] != info.HasBody {
			rt.Fatalf("PointInfo %+v, model %+v (held %v)", info, mp, held[info.Point])
		}
		if info.HasBody && info.Missing != m.missing(m.bodies[info.Point.Hash]) {
			rt.Fatalf("PointInfo %+v, model missing %d", info, m.missing(m.bodies[info.Point.Hash]))
		}
	}
	hashes := make([]block.Hash, len(pool))
	for i, tx := range pool {
		hashes[i] = block.HashBytes(tx)
	}
	out := make([]bool, len(hashes))
	if _, err := db.HasTxs(hashes, out); err != nil {
		rt.Fatal(err)
	}
	for i, h := range hashes {
		if _, ok := m.txs[h]; ok != out[i] {
			rt.Fatalf("HasTxs(tx %d) = %v, model %v", i, out[i], ok)
		}
	}
}

// checkEvents compares the events of one step with what the model says
// became true: BodyStored for newly held points, ClosureComplete for newly
// complete ones, BodyStored first.
func checkEvents(rt *rapid.T, got []Event, prevHeld, held, prevComplete, complete map[block.Point]bool) {
	rt.Helper()
	var want []Event
	for p := range held {
		if !prevHeld[p] {
			want = append(want, Event{BodyStored, p})
		}
	}
	for p := range complete {
		if !prevComplete[p] {
			want = append(want, Event{ClosureComplete, p})
		}
	}
	seenBody := make(map[block.Point]bool)
	for _, e := range got {
		if e.Kind == BodyStored {
			seenBody[e.Point] = true
		} else if !prevHeld[e.Point] && !seenBody[e.Point] {
			rt.Fatalf("ClosureComplete(%s) before BodyStored", e.Point)
		}
	}
	byKindPoint := func(a, b Event) int {
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		return comparePoints(a.Point, b.Point)
	}
	got = slices.SortedFunc(slices.Values(got), byKindPoint)
	slices.SortFunc(want, byKindPoint)
	if !slices.Equal(got, want) {
		rt.Fatalf("events %v, model %v", got, want)
	}
}
