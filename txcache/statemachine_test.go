package txcache

import (
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
)

// model is the cache as plain maps, with no capacity limit. The real cache
// may hold less (a full table refuses inserts), never more: every tx it
// reports is in the model with at least its state, and with no refusal it
// matches the model exactly.
type model struct {
	maxAnnouncements int
	floor            uint64
	announcements    []Announcement // oldest first
	bodies           map[block.Hash]*modelBody
	txs              map[block.Hash]*modelTx
}

type modelBody struct {
	inserted bool
	refs     int
	txs      []block.EBTx
}

type modelTx struct {
	state TxState
	refs  int
}

func (m *model) insertAnnouncement(a Announcement) bool {
	if a.Slot < m.floor {
		return false
	}
	i, found := slices.BinarySearchFunc(m.announcements, a, olderThan)
	if found {
		return false
	}
	m.announcements = slices.Insert(m.announcements, i, a)
	if m.bodies[a.EbHash] == nil {
		m.bodies[a.EbHash] = &modelBody{}
	}
	m.bodies[a.EbHash].refs++
	held := true
	for len(m.announcements) > m.maxAnnouncements {
		held = held && m.announcements[0] != a
		m.drop(m.announcements[0])
		m.announcements = m.announcements[1:]
	}
	return held
}

func (m *model) evictOlderThan(slot uint64) {
	m.floor = max(m.floor, slot)
	for len(m.announcements) > 0 && m.announcements[0].Slot < slot {
		m.drop(m.announcements[0])
		m.announcements = m.announcements[1:]
	}
}

func (m *model) drop(a Announcement) {
	b := m.bodies[a.EbHash]
	if b.refs--; b.refs > 0 {
		return
	}
	delete(m.bodies, a.EbHash)
	if !b.inserted {
		return
	}
	for _, tx := range b.txs {
		t := m.txs[tx.TxHash]
		if t.refs--; t.refs == 0 {
			delete(m.txs, tx.TxHash)
		}
	}
}

// insertBody returns the model's missing indexes, or false if not announced.
func (m *model) insertBody(eb block.Hash, txs []block.EBTx) ([]int, bool) {
	b := m.bodies[eb]
	if b == nil {
		return nil, false
	}
	if !b.inserted {
		b.inserted, b.txs = true, txs
		for _, tx := range txs {
			if m.txs[tx.TxHash] == nil {
				m.txs[tx.TxHash] = &modelTx{state: TxNotYetInserted}
			}
			m.txs[tx.TxHash].refs++
		}
	}
	var missing []int
	for i, tx := range txs {
		if !m.state(tx.TxHash).Held() {
			missing = append(missing, i)
		}
	}
	return missing, true
}

func (m *model) mark(h block.Hash, to TxState) MarkResult {
	t := m.txs[h]
	switch {
	case t == nil:
		return MarkExtra
	case t.state >= to:
		return MarkAlready
	}
	t.state = to
	return MarkWanted
}

func (m *model) state(h block.Hash) TxState {
	if t := m.txs[h]; t != nil {
		return t.state
	}
	return TxAbsent
}

// TestCacheMatchesModel drives the cache and the model with the same random
// operations on a tiny table (which fills up completely) and checks, after
// every step, the cache's invariants and that it never reports more than the
// model: no false hit, ever.
func TestCacheMatchesModel(t *testing.T) {
	sawFull, sawEviction := false, false
	rapid.Check(t, func(rt *rapid.T) {
		const numTxs, numEBs, numRBs = 20, 6, 4
		txs := make([]block.Hash, numTxs)
		for i := range txs {
			txs[i] = testHash('t', i)
		}
		ebs := make([]block.Hash, numEBs)
		bodies := make(map[block.Hash][]block.EBTx)
		for e := range ebs {
			ebs[e] = testHash('e', e)
			picks := rapid.SliceOfNDistinct(rapid.IntRange(0, numTxs-1), 0, 8, rapid.ID[int]).Draw(rt, "body")
			for _, p := range picks {
				bodies[ebs[e]] = append(bodies[ebs[e]], block.EBTx{TxHash: txs[p], Size: uint32(100 + p)})
			}
		}
		opts := Options{
			MaxAnnouncements: rapid.IntRange(1, 5).Draw(rt, "maxAnnouncements"),
			TxCapacity:       rapid.IntRange(1, 16).Draw(rt, "txCapacity"),
		}
		opts.maxProbe = rapid.IntRange(0, opts.TxCapacity).Draw(rt, "maxProbe")
		if clusters := rapid.IntRange(0, 3).Draw(rt, "clusters"); clusters > 0 {
			opts.homeHook = func(h block.Hash) uint64 { return uint64(h[0]) % uint64(clusters) }
		}
		opts.seed = 1 + rapid.Uint64Range(0, 1<<62).Draw(rt, "seed") // non-zero: reproducible homes
		c := New(opts)
		m := &model{
			maxAnnouncements: opts.MaxAnnouncements,
			bodies:           make(map[block.Hash]*modelBody),
			txs:              make(map[block.Hash]*modelTx),
		}
		exact := func() bool { return c.txs.refused.Load() == 0 }
		drawTxs := func(rt *rapid.T) []block.Hash {
			return rapid.SliceOfN(rapid.SampledFrom(txs), 0, 6).Draw(rt, "txs")
		}
		markAction := func(to TxState) func(*rapid.T) {
			return func(rt *rapid.T) {
				hashes := drawTxs(rt)
				var got []MarkResult
				if to == TxInserted {
					got = c.MarkInserted(hashes)
				} else {
					got = c.MarkValidated(hashes)
				}
				for i, h := range hashes {
					want := m.mark(h, to)
					switch {
					case exact() && got[i] != want:
						rt.Fatalf("mark %s %s: %s, model %s", h.Short(), to, got[i], want)
					case got[i] == MarkAlready && want != MarkAlready,
						got[i] == MarkWanted && want == MarkExtra:
						rt.Fatalf("mark %s %s: %s, model %s (false hit)", h.Short(), to, got[i], want)
					}
				}
			}
		}

		actions := map[string]func(*rapid.T){
			"announce": func(rt *rapid.T) {
				a := Announcement{
					Slot:   rapid.Uint64Range(0, 15).Draw(rt, "slot"),
					RbHash: testHash('r', rapid.IntRange(0, numRBs-1).Draw(rt, "rb")),
					EbHash: rapid.SampledFrom(ebs).Draw(rt, "eb"),
				}
				before := len(m.announcements)
				if got, want := c.InsertAnnouncement(a.Slot, a.RbHash, a.EbHash), m.insertAnnouncement(a); got != want {
					rt.Fatalf("InsertAnnouncement(%v) = %v, model %v", a, got, want)
				}
				sawEviction = sawEviction || before == m.maxAnnouncements
			},
			"insertBody": func(rt *rapid.T) {
				// Mostly announced EBs, so bodies pile up and share txs.
				candidates := ebs
				if len(m.announcements) > 0 && rapid.IntRange(0, 3).Draw(rt, "announced") > 0 {
					candidates = nil
					for _, a := range m.announcements {
						candidates = append(candidates, a.EbHash)
					}
				}
				eb := rapid.SampledFrom(candidates).Draw(rt, "eb")
				got, err := c.InsertBody(eb, bodies[eb])
				want, ok := m.insertBody(eb, bodies[eb])
				if ok != (err == nil) || !ok && !errors.Is(err, ErrNotAnnounced) {
					rt.Fatalf("InsertBody(%s): err %v, model announced %v", eb.Short(), err, ok)
				}
				checkMissing(rt, "InsertBody", got, want, exact())
			},
			"markInserted":  markAction(TxInserted),
			"markValidated": markAction(TxValidated),
			"evictOlderThan": func(rt *rapid.T) {
				slot := rapid.Uint64Range(0, 16).Draw(rt, "slot")
				c.EvictOlderThan(slot)
				m.evictOlderThan(slot)
			},
			"lookup": func(rt *rapid.T) {
				hashes := drawTxs(rt)
				out := make([]TxState, len(hashes))
				held := c.LookupTxs(hashes, out)
				n := 0
				for i, h := range hashes {
					if single, _ := c.LookupTx(h); single != out[i] {
						rt.Fatalf("LookupTx(%s) = %s, LookupTxs says %s", h.Short(), single, out[i])
					}
					if out[i].Held() {
						n++
					}
				}
				if n != held {
					rt.Fatalf("LookupTxs returned %d held, out has %d", held, n)
				}
				eb := rapid.SampledFrom(ebs).Draw(rt, "eb")
				var want []int
				for i, tx := range bodies[eb] {
					if !m.state(tx.TxHash).Held() {
						want = append(want, i)
					}
				}
				checkMissing(rt, "AppendMissing", c.AppendMissing(nil, bodies[eb]), want, exact())
			},
			"": func(rt *rapid.T) {
				checkCache(rt, c)
				if !slices.Equal(c.announcements, m.announcements) {
					rt.Fatalf("announcements %v, model %v", c.announcements, m.announcements)
				}
				if len(c.bodies) != len(m.bodies) {
					rt.Fatalf("%d bodies, model %d", len(c.bodies), len(m.bodies))
				}
				for eb, mb := range m.bodies {
					state, ok := c.LookupBody(eb)
					want := map[bool]BodyState{false: BodyNotYetInserted, true: BodyInserted}[mb.inserted]
					if !ok || state != want || c.bodies[eb].refs != mb.refs {
						rt.Fatalf("body %s: %s (held %v), model %s with %d refs", eb.Short(), state, ok, want, mb.refs)
					}
				}
				for _, h := range txs {
					got, _ := c.LookupTx(h)
					want, refs := m.state(h), 0
					if mt := m.txs[h]; mt != nil {
						refs = mt.refs
					}
					gotRefs := int(txRefs(c, h))
					if exact() && (got != want || gotRefs != refs) {
						rt.Fatalf("tx %s: %s with %d refs, model %s with %d", h.Short(), got, gotRefs, want, refs)
					}
					if got > want || gotRefs > refs {
						rt.Fatalf("tx %s: %s with %d refs, model only %s with %d (false hit)", h.Short(), got, gotRefs, want, refs)
					}
				}
				sawFull = sawFull || !exact()
			},
		}
		// Several rounds: cascades need bodies that share txs to pile up.
		for range 5 {
			rt.Repeat(actions)
		}
	})
	if !sawFull || !sawEviction {
		t.Fatalf("the runs never filled the table (%v) or evicted over the limit (%v)", sawFull, sawEviction)
	}
}

// checkMissing checks a cache's missing set against the model's: it must
// contain every index the model misses (else a fetch would be skipped), and
// with no refusal equal it.
func checkMissing(t fataler, what string, got, want []int, exact bool) {
	t.Helper()
	for _, i := range want {
		if !slices.Contains(got, i) {
			t.Fatalf("%s: missing %v lacks %d (model %v): a false hit", what, got, i, want)
		}
	}
	if exact && len(got) != len(want) {
		t.Fatalf("%s: missing %v, model %v", what, got, want)
	}
}
