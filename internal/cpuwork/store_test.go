package cpuwork

import (
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/pprof/profile"

	"github.com/leiosnode/leiosnode/internal/waittest"
)

// writerFrame is writePebble's function name, which marks the samples of
// the writing goroutine itself.
const writerFrame = "github.com/leiosnode/leiosnode/internal/cpuwork.writePebble"

// writePebble writes n bytes of incompressible values under random keys,
// so that Pebble flushes memtables and compacts overlapping L0 tables.
func writePebble(t *testing.T, db *pebble.DB, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	key := make([]byte, 16)
	value := make([]byte, 4096)
	for written := 0; written < n; {
		b := db.NewBatch()
		for range 64 {
			for i := range key {
				key[i] = byte(rng.Uint32())
			}
			for i := range value {
				value[i] = byte(rng.Uint32())
			}
			if err := b.Set(key, value, nil); err != nil {
				t.Fatal(err)
			}
			written += len(key) + len(value)
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPebbleBackgroundWorkIsStore writes to a real Pebble from an
// unlabelled goroutine: the writer's own work is other, and the flushes
// and compactions it sets off must be store, not other, though they carry
// no work label.
func TestPebbleBackgroundWorkIsStore(t *testing.T) {
	db, err := pebble.Open(t.TempDir(), &pebble.Options{
		MemTableSize:          512 << 10,
		L0CompactionThreshold: 2,
		Logger:                quiet{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := start(t, Options{Window: 200 * time.Millisecond})
	sub := s.subscribe()
	defer s.unsubscribe(sub)

	writePebble(t, db, 8<<20)
	// A compaction may still run: wait for one to have finished, so the
	// test holds the work it is about.
	waittest.Until(t, "a flush and a compaction after the writes", func() bool {
		m := db.Metrics()
		return m.Flush.Count > 0 && m.Compact.DefaultCount > 0
	})
	nextWindow(t, s.Sampler)
	windows, _ := s.take(sub)
	p, err := profile.Merge(windows)
	if err != nil {
		t.Fatal(err)
	}

	// Pebble's background work: samples in Pebble off the writer's
	// goroutine. Say where they run, for whoever updates storeFrames.
	cpu := cpuValue(p)
	var background, store, byStack time.Duration
	roots := map[string]time.Duration{}
	for _, smp := range p.Sample {
		frames := functions(smp)
		if slices.Contains(frames, writerFrame) || !slices.ContainsFunc(frames, isPebble) {
			continue
		}
		d := time.Duration(smp.Value[cpu])
		background += d
		if classify(smp) == Store {
			store += d
		}
		// Pebble labels its flushes and compactions itself, which would
		// hide a frame name gone stale: the stack alone must say store.
		unlabelled := *smp
		unlabelled.Label = nil
		if classify(&unlabelled) == Store {
			byStack += d
		}
		roots[outermost(frames)+" "+strings.Join(smp.Label["pebble"], ",")] += d
	}
	names := slices.Collect(maps.Keys(roots))
	sort.Slice(names, func(i, j int) bool { return roots[names[i]] > roots[names[j]] })
	for _, n := range names {
		t.Logf("%8v %s", roots[n], n)
	}
	secs := s.Seconds()
	t.Logf("background %v, of it store %v (%v by the stack alone); counted %v", background, store, byStack, secs)
	if background == 0 || secs["store"] == 0 {
		t.Fatalf("no Pebble background work seen: %v", secs)
	}
	if store < background*9/10 || byStack < background*9/10 {
		t.Errorf("store is %v (%v by the stack alone) of Pebble's %v background work", store, byStack, background)
	}
}

// functions are the function names of smp's stack, leaf first, inlined
// ones included.
func functions(smp *profile.Sample) []string {
	var names []string
	for _, loc := range smp.Location {
		for _, line := range loc.Line {
			if line.Function != nil {
				names = append(names, line.Function.Name)
			}
		}
	}
	return names
}

// outermost is the Pebble function nearest the root of a stack.
func outermost(frames []string) string {
	for i := len(frames) - 1; i >= 0; i-- {
		if isPebble(frames[i]) {
			return frames[i]
		}
	}
	return ""
}

func isPebble(name string) bool { return strings.HasPrefix(name, "github.com/cockroachdb/pebble/") }

// quiet is a Pebble logger that keeps Pebble's news out of the test's
// output, and fails the test on its fatal errors.
type quiet struct{ t *testing.T }

func (quiet) Infof(string, ...any)           {}
func (q quiet) Errorf(f string, args ...any) { q.t.Errorf(f, args...) }
func (q quiet) Fatalf(f string, args ...any) { q.t.Fatalf(f, args...) }
