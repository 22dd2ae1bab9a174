package txcache

import (
	"testing"

	"github.com/zeebo/xxh3"
	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/block"
)

// hash32 is the library's xxh3 with seed, for every key and seed.
func TestHash32MatchesXXH3(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var h block.Hash
		copy(h[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(rt, "key"))
		seed := rapid.Uint64().Draw(rt, "seed")
		k, s := keyOf(&h), newSecret(seed)
		if got, want := hash32(&k, &s), xxh3.HashSeed(h[:], seed); got != want {
			rt.Fatalf("hash32 = %#x, xxh3.HashSeed = %#x", got, want)
		}
	})
}

// A reader finds exactly what the writer finds: in small tables with
// crowded homes, long clusters, probe bounds under and over a line of
// state words, and deletions, for keys present and absent. With 128 tag
// values and crowded homes, keys of equal tags meet often.
func TestReaderAgreesWithWriter(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.Uint64Range(1, 60).Draw(rt, "homes")
		spread := rapid.Uint64Range(1, n).Draw(rt, "spread")
		maxProbe := rapid.Uint64Range(1, 40).Draw(rt, "maxProbe")
		homes := map[block.Hash]uint64{}
		tb := newTable(n, maxProbe, rapid.Uint64().Draw(rt, "seed"), func(h block.Hash) uint64 { return homes[h] })
		universe := make([]block.Hash, rapid.IntRange(1, 120).Draw(rt, "keys"))
		for i := range universe {
			universe[i] = testHash('t', i)
			homes[universe[i]] = uint64(i*7) % spread
		}
		for _, i := range rapid.SliceOf(rapid.IntRange(0, len(universe)-1)).Draw(rt, "inserts") {
			k := keyOf(&universe[i])
			tb.addRef(&k, tb.home(&universe[i]), tb.tag(&k))
		}
		for _, i := range rapid.SliceOf(rapid.IntRange(0, len(universe)-1)).Draw(rt, "deletes") {
			k := keyOf(&universe[i])
			tb.release(&k, tb.home(&universe[i]), tb.tag(&k))
		}
		checkTable(rt, tb)
		for i, h := range universe {
			k := keyOf(&h)
			home := tb.home(&h)
			w, ok := tb.tryLookup(&k, home, tb.tag(&k))
			pos, found, _ := tb.probe(&k, home, tb.tag(&k))
			if !ok || (w != 0) != found || found && w != tb.meta[pos].Load() {
				rt.Fatalf("key %d: reader %#x (ok %v), writer found %v", i, w, ok, found)
			}
		}
	})
}
