// Package benchkeys generates the deterministic keys of the txcache
// benchmark, shared by txcache's go-test benchmarks and
// cmd/leiosbench so both measure the same thing: N EBs of M txs each,
// pairwise disjoint, every key 32 bytes of splitmix64 output.
//
// Keys are drawn from separate counter domains (txs, miss keys, EB hashes,
// RB hashes, fillers), so no two kinds ever collide. The package holds no state.
package benchkeys

import (
	"encoding/binary"

	"github.com/leiosnode/leiosnode/block"
)

// SplitMix64 advances state and returns its next output (Steele, Lea and
// Flood's splitmix64, as in java.util.SplittableRandom).
func SplitMix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Key is the 32-byte key of counter n: four consecutive splitmix64 outputs
// from state 4n.
func Key(n uint64) block.Hash {
	var h block.Hash
	state := 4 * n
	for i := range 4 {
		binary.LittleEndian.PutUint64(h[8*i:], SplitMix64(&state))
	}
	return h
}

// Counter domains, in the counter's top bits; the low bits hold (EB, tx).
const (
	domainTx = iota
	domainMiss
	domainEB
	domainRB
	domainFiller
)

// MaxTxsPerEB bounds the tx index, which has 24 bits of the counter.
const MaxTxsPerEB = 1 << 24

func counter(domain, eb, tx int) uint64 {
	return uint64(domain)<<60 | uint64(eb)<<24 | uint64(tx)
}

// TxKey is the hash of tx i of EB eb.
func TxKey(eb, i int) block.Hash { return Key(counter(domainTx, eb, i)) }

// MissKey is a tx hash no EB contains.
func MissKey(i int) block.Hash { return Key(counter(domainMiss, 0, i)) }

// FreshMissKey is miss i of lookup batch b: a tx hash no EB contains,
// distinct from every MissKey and from every other batch's.
func FreshMissKey(b, i int) block.Hash { return Key(counter(domainMiss, b+1, i)) }

// FillerKey is a key of no other kind: it fills a structure that is then
// emptied, so its memory is faulted in before it is measured.
func FillerKey(i int) block.Hash { return Key(counter(domainFiller, 0, i)) }

// EBHash is the hash of EB eb.
func EBHash(eb int) block.Hash { return Key(counter(domainEB, eb, 0)) }

// RBHash is the hash of the RB announcing EB eb.
func RBHash(eb int) block.Hash { return Key(counter(domainRB, eb, 0)) }

// EBTxs returns the body of EB eb: txs txs of size 300 bytes.
func EBTxs(eb, txs int) []block.EBTx {
	body := make([]block.EBTx, txs)
	for i := range body {
		body[i] = block.EBTx{TxHash: TxKey(eb, i), Size: 300}
	}
	return body
}

// LookupBatch is one EB-sized lookup batch of txs keys against a cache
// populated with EBs 0..ebs-1, with hits interleaved at hitPct percent
// (a multiple of 20): position i is a hit when i mod 5 < hitPct/20, the hit
// being tx i of the newest EB (ebs-1); the other positions are miss keys.
func LookupBatch(ebs, txs, hitPct int) []block.Hash {
	batch := make([]block.Hash, txs)
	for i := range batch {
		if IsHit(i, hitPct) {
			batch[i] = TxKey(ebs-1, i)
		} else {
			batch[i] = MissKey(i)
		}
	}
	return batch
}

// IsHit reports whether position i of a LookupBatch at hitPct is a hit.
func IsHit(i, hitPct int) bool { return i%5 < hitPct/20 }

// Hits is the number of hits in a LookupBatch of txs at hitPct.
func Hits(txs, hitPct int) int {
	n := 0
	for i := range txs {
		if IsHit(i, hitPct) {
			n++
		}
	}
	return n
}
