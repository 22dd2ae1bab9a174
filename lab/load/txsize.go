package load

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/leiosnode/leiosnode/ledger"
)

// TxSize is the distribution of the sizes of the txs a firehose makes, in
// bytes of serialized tx: each tx is padded with metadata to a target size
// drawn from it. The zero TxSize pads nothing: every tx is a plain payment
// of some 191 B, as the firehose made before it had sizes.
//
// A tx cannot be smaller than its plain payment, and padding adds 44 B at
// least (the body's auxiliary data hash and the smallest message), so a
// target below the plain size makes a plain payment and one less than
// 44 B above it the smallest padded tx: a tx is never smaller than its
// target, and never larger unless the target falls in that gap.
type TxSize struct {
	// Min and Max bound the targets: Min == Max is a fixed size, else the
	// targets are log-uniform between them (their logarithm uniform), as
	// tx sizes on a chain spread over orders of magnitude.
	Min, Max int
	// name is the named mix it was parsed from, if any.
	name string
}

// LargeTxSize is the named mix "large": log-uniform from 200 B to 16,384 B
// (the max tx size), a mean of 3,673 B, so that EB closures can reach
// their 12 MB bound at a tx rate a devnet carries.
var LargeTxSize = TxSize{Min: 200, Max: 16_384, name: "large"}

// ErrTxSizeSyntax: a tx size distribution is spelled N, MIN-MAX or large.
var ErrTxSizeSyntax = errors.New("want N (bytes), MIN-MAX (log-uniform between, e.g. 200-16384) or large (200-16384)")

// ParseTxSize reads a tx size distribution: "N" bytes each, "MIN-MAX"
// log-uniform between, or the named mix "large" (LargeTxSize).
func ParseTxSize(s string) (TxSize, error) {
	if s == LargeTxSize.name {
		return LargeTxSize, nil
	}
	lo, hi, isRange := strings.Cut(s, "-")
	if !isRange {
		hi = lo
	}
	least, errLo := strconv.Atoi(lo)
	most, errHi := strconv.Atoi(hi)
	switch {
	case errLo != nil || errHi != nil || strings.HasPrefix(lo, "+") || strings.HasPrefix(hi, "+"):
		return TxSize{}, fmt.Errorf("tx size %q: %w", s, ErrTxSizeSyntax)
	case least < 1:
		return TxSize{}, fmt.Errorf("tx size %q: sizes are positive: %w", s, ErrTxSizeSyntax)
	case least > most:
		return TxSize{}, fmt.Errorf("tx size %q: MIN above MAX: %w", s, ErrTxSizeSyntax)
	}
	return TxSize{Min: least, Max: most}, nil
}

// String spells the distribution as ParseTxSize reads it; "" for the
// plain payments of the zero TxSize.
func (d TxSize) String() string {
	switch {
	case d.name != "":
		return d.name
	case d.Padded() && d.Min == d.Max:
		return strconv.Itoa(d.Min)
	case d.Padded():
		return fmt.Sprintf("%d-%d", d.Min, d.Max)
	}
	return ""
}

// Padded says the txs are padded to drawn sizes: false for the zero
// TxSize's plain payments.
func (d TxSize) Padded() bool { return d.Max > 0 }

// Mean is the mean target size: (Max − Min) / ln(Max / Min) for a
// log-uniform one. The txs' mean is a little above it: none is smaller
// than its plain payment, or in the gap above it (see TxSize).
func (d TxSize) Mean() float64 {
	if d.Min == d.Max {
		return float64(d.Min)
	}
	return float64(d.Max-d.Min) / math.Log(float64(d.Max)/float64(d.Min))
}

// txTargets draws a chain's target tx sizes, deterministically: the same
// distribution and chain name give the same targets, run after run.
type txTargets struct {
	dist TxSize
	rng  *rand.Rand
}

func newTxTargets(d TxSize, chainName string) *txTargets {
	h := fnv.New64a()
	h.Write([]byte(chainName))
	return &txTargets{dist: d, rng: rand.New(rand.NewPCG(h.Sum64(), uint64(d.Min)<<32|uint64(d.Max)))}
}

// next is the next target: Min·(Max/Min)^u for u uniform in [0, 1),
// rounded, within [Min, Max].
func (t *txTargets) next() int {
	d := t.dist
	if d.Min == d.Max {
		return d.Min
	}
	target := math.Round(float64(d.Min) * math.Pow(float64(d.Max)/float64(d.Min), t.rng.Float64()))
	return min(d.Max, max(d.Min, int(target)))
}

// A padded tx carries its padding as a CIP-20 message, the convention
// for a tx's comment on Cardano: {674: {"msg": [text, …]}}, each text up
// to 64 bytes.
const (
	paddingLabel = 674
	// paddingPrefix is the size of the message up to its list:
	// map(1) 674 map(1) "msg".
	paddingPrefix = 1 + 3 + 1 + 4
	// minPadding is the smallest padding: an empty message list.
	minPadding = paddingPrefix + 1
	// maxChunk is the encoded size of the longest text, 64 bytes.
	maxChunk = 2 + 64
)

// paddingText is what the message says, cut to each text's length: its
// content is immaterial, its size is what counts. It is 64 bytes, the
// longest text.
const paddingText = "leiosnode load: this message pads the tx to a drawn size, CIP-20"

// padding is auxiliary data of exactly size bytes (size ≥ minPadding): a
// CIP-20 message whose texts' encodings add up to what the prefix and the
// list's head leave.
func padding(size int) ([]byte, error) {
	if size < minPadding {
		return nil, fmt.Errorf("padding of %d bytes: %d at least", size, minPadding)
	}
	var chunks []int
	for head := 1; ; head++ {
		chunks = splitChunks(size - paddingPrefix - head)
		// A list's head grows with its count; more chunks (one split in
		// two) make a list that needs the longer head fit.
		for cborHeadSize(len(chunks)) < head && splitOne(&chunks) {
		}
		if cborHeadSize(len(chunks)) == head {
			break
		}
		if head > 9 {
			return nil, fmt.Errorf("padding of %d bytes: no split fits", size)
		}
	}
	texts := make([]any, len(chunks))
	for i, encoded := range chunks {
		n := encoded - 1 // a text under 24 bytes has a 1-byte head
		if encoded > 24 {
			n = encoded - 2
		}
		texts[i] = paddingText[:n]
	}
	aux, err := ledger.EncodeMetadata(map[uint64]any{paddingLabel: map[string]any{"msg": texts}})
	switch {
	case err != nil:
		return nil, err
	case len(aux) != size:
		return nil, fmt.Errorf("padding of %d bytes encoded to %d", size, len(aux))
	}
	return aux, nil
}

// splitChunks splits n bytes into the encoded sizes of texts: as many of
// the longest as fit, then the rest. No text encodes to 25 bytes (24 bytes
// of text take a 2-byte head), so a rest of 25 is made of two.
func splitChunks(n int) []int {
	if n < 0 {
		return nil
	}
	chunks := make([]int, n/maxChunk, n/maxChunk+2)
	for i := range chunks {
		chunks[i] = maxChunk
	}
	switch rest := n % maxChunk; {
	case rest == 25 && len(chunks) > 0:
		chunks[len(chunks)-1] = maxChunk - 1
		chunks = append(chunks, 26)
	case rest == 25:
		chunks = append(chunks, 12, 13)
	case rest > 0:
		chunks = append(chunks, rest)
	}
	return chunks
}

// splitOne splits the first chunk that can be split into two encodable
// ones of the same total, and says whether there was one.
func splitOne(chunks *[]int) bool {
	for i, c := range *chunks {
		for a := c / 2; a >= 1; a-- {
			if b := c - a; a != 25 && b != 25 && b <= maxChunk {
				(*chunks)[i] = a
				*chunks = append(*chunks, b)
				return true
			}
		}
	}
	return false
}

// cborHeadSize is the size of the head of a list of n items.
func cborHeadSize(n int) int {
	switch {
	case n < 24:
		return 1
	case n < 1<<8:
		return 2
	case n < 1<<16:
		return 3
	}
	return 5
}
