package txcache

import (
	"math/bits"

	"github.com/leiosnode/leiosnode/block"
)

// group is how many keys a batch hashes and touches at once. Probes of a
// large table miss the CPU caches; a batch hashes the next group and issues
// its first loads before probing the current one, so a group's misses are in
// flight together and behind useful work. That is where a batch gets its
// speed over one-at-a-time lookups (and over a Go map). 32 measured better
// than 16 and no worse than 64.
const group = 32

// loadGroup returns the keys of the group starting at base, copying them into
// buf if the source does not hold them as block.Hash values.
type loadGroup func(base int, buf *[group]block.Hash) []block.Hash

// probes are a group's keys as table words, with their homes and tags.
type probes struct {
	keys        [group]key
	homes, tags [group]uint64
}

// visitGroup handles the keys of the group starting at base (hashes[i] is
// p.keys[i]), whose probes are computed and slots touched.
type visitGroup func(base int, hashes []block.Hash, p *probes)

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
	var groups [2]probes
	hashes := load(0, &bufs[0])
	t.prepare(hashes, &groups[0])
	for base, cur := 0, 0; base < n; base, cur = base+group, cur^1 {
		var next []block.Hash
		if base+group < n {
			next = load(base+group, &bufs[cur^1])
			t.prepare(next, &groups[cur^1])
		}
		visit(base, hashes, &groups[cur])
		hashes = next
	}
}

// prepare computes the probes of hashes (len ≤ group), then touches their
// slots in a loop of its own: short enough that all the group's misses are
// in flight at once (interleaved with hashing, the CPU's reorder window
// would hold only two or three).
func (t *table) prepare(hashes []block.Hash, p *probes) {
	for i := range hashes {
		p.keys[i] = keyOf(&hashes[i])
		if t.homeHook != nil {
			p.homes[i], p.tags[i] = t.start(&p.keys[i])
			continue
		}
		x := hash32(&p.keys[i], &t.secret) // start, inlined
		p.homes[i], _ = bits.Mul64(x, t.n)
		p.tags[i] = tagOf(x)
	}
	for _, h := range p.homes[:len(hashes)] {
		t.touch(h)
	}
}

// lookupBatch sets out[i] to the state of hashes[i] and returns how many are
// held. Safe alongside the writer.
func (t *table) lookupBatch(hashes []block.Hash, out []TxState) (held int) {
	out = out[:len(hashes)]
	t.eachGroup(len(hashes), hashGroups(hashes), func(base int, hashes []block.Hash, p *probes) {
		for i := range hashes {
			s := stateKind(t.lookupProbe(p, i))
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
	t.eachGroup(len(txs), txGroups(txs), func(base int, hashes []block.Hash, p *probes) {
		for i := range hashes {
			if !stateKind(t.lookupProbe(p, i)).Held() {
				dst = append(dst, base+i)
			}
		}
	})
	return dst
}

// lookupProbe is lookup of the i-th key of p.
func (t *table) lookupProbe(p *probes, i int) uint64 {
	w, ok := t.tryLookupTagged(&p.keys[i], p.homes[i], p.tags[i])
	if !ok {
		w = t.lookupTagged(&p.keys[i], p.homes[i], p.tags[i])
	}
	return w
}
