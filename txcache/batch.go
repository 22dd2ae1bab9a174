package txcache

import "github.com/leiosnode/leiosnode/block"

// group is how many keys a batch hashes and touches at once. Probes of a
// large table miss the CPU caches; a batch hashes the next group and issues
// its first loads before probing the current one, so a group's misses are in
// flight together and behind useful work. That is where a batch gets its
// speed over one-at-a-time lookups (and over a Go map).
const group = 16

// loadGroup returns the keys of the group starting at base, copying them into
// buf if the source does not hold them as block.Hash values.
type loadGroup func(base int, buf *[group]block.Hash) []block.Hash

// visitGroup handles the keys of the group starting at base, whose homes are
// computed and slots touched.
type visitGroup func(base int, keys []block.Hash, homes *[group]uint64)

func hashGroups(hashes []block.Hash) loadGroup {
	return func(base int, _ *[group]block.Hash) []block.Hash {
		return hashes[base:min(base+group, len(hashes))]
	}
}

func txGroups(txs []block.EBTx) loadGroup {
	return func(base int, buf *[group]block.Hash) []block.Hash {
		n := min(group, len(txs)-base)
		for i := range n {
			buf[i] = txs[base+i].TxHash
		}
		return buf[:n]
	}
}

// eachGroup visits n keys group by group, one group ahead in hashing and
// touching: the writer and the readers both go through it.
func (t *table) eachGroup(n int, load loadGroup, visit visitGroup) {
	if n == 0 {
		return
	}
	var bufs [2][group]block.Hash
	var homes [2][group]uint64
	keys := load(0, &bufs[0])
	t.prepare(keys, &homes[0])
	for base, cur := 0, 0; base < n; base, cur = base+group, cur^1 {
		var next []block.Hash
		if base+group < n {
			next = load(base+group, &bufs[cur^1])
			t.prepare(next, &homes[cur^1])
		}
		visit(base, keys, &homes[cur])
		keys = next
	}
}

// prepare computes the homes of keys (len ≤ group), then touches their
// slots in a loop of its own: short enough that all the group's misses are
// in flight at once (interleaved with hashing, the CPU's reorder window
// would hold only two or three).
func (t *table) prepare(keys []block.Hash, homes *[group]uint64) {
	for i := range keys {
		homes[i] = t.home(&keys[i])
	}
	for _, h := range homes[:len(keys)] {
		t.touch(h)
	}
}

// lookupBatch sets out[i] to the state of hashes[i] and returns how many are
// held. Safe alongside the writer.
func (t *table) lookupBatch(hashes []block.Hash, out []TxState) (held int) {
	out = out[:len(hashes)]
	t.eachGroup(len(hashes), hashGroups(hashes), func(base int, keys []block.Hash, homes *[group]uint64) {
		for i := range keys {
			k := keyOf(&keys[i])
			s := stateKind(t.lookup(&k, homes[i]))
			out[base+i] = s
			if s.Held() {
				held++
			}
		}
	})
	return held
}

// appendMissing appends the index of every tx of txs that is not held. Safe
// alongside the writer.
func (t *table) appendMissing(dst []int, txs []block.EBTx) []int {
	t.eachGroup(len(txs), txGroups(txs), func(base int, keys []block.Hash, homes *[group]uint64) {
		for i := range keys {
			k := keyOf(&keys[i])
			if !stateKind(t.lookup(&k, homes[i])).Held() {
				dst = append(dst, base+i)
			}
		}
	})
	return dst
}
