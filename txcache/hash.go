package txcache

import "math/bits"

// hash32 is xxh3.HashSeed(k's 32 bytes, seed) — the 17..128-byte path of
// XXH3-64 for exactly 32 bytes, with the seed folded into the key words
// once, in newSecret. The library's general entry point dispatches on the
// length and is not inlined; this is a few multiplications a key.
// TestHash32MatchesXXH3 checks it against the library.
func hash32(k *key, s *secret) uint64 {
	hi, lo := bits.Mul64(k[0]^s[0], k[1]^s[1])
	acc := 32*xxh3Prime1%(1<<64) + (hi ^ lo)
	hi, lo = bits.Mul64(k[2]^s[2], k[3]^s[3])
	acc += hi ^ lo
	acc = (acc ^ acc>>37) * 0x165667919e3779f9 // xxh3Avalanche
	return acc ^ acc>>32
}

// secret is the first 32 bytes of xxh3's default key with the seed added to
// the words that meet even input words and subtracted from the others.
type secret [4]uint64

func newSecret(seed uint64) secret {
	return secret{xxh3Key00 + seed, xxh3Key08 - seed, xxh3Key16 + seed, xxh3Key24 - seed}
}

// XXH3's constants: PRIME64_1 and the first four words of kSecret.
const (
	xxh3Prime1 = 0x9e3779b185ebca87
	xxh3Key00  = 0xbe4ba423396cfeb8
	xxh3Key08  = 0x1cad21f72c81017c
	xxh3Key16  = 0xdb979083e96dd4de
	xxh3Key24  = 0x1f67b3b7a4a44072
)
