package wan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// rateUnits are the units ParseRate takes, in bytes per second: bits and
// bytes in decimal multiples, bytes in binary ones too.
var rateUnits = []struct {
	suffix string
	bytes  float64
}{
	{"gbit", 1e9 / 8}, {"mbit", 1e6 / 8}, {"kbit", 1e3 / 8}, {"bit", 1.0 / 8},
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"KB", 1e3}, {"B", 1},
}

// ParseRate reads a link's bandwidth: a number of bytes per second, or one
// with a unit — 100Mbit, 1Gbit, 512kbit (bits), 12.5MB, 500kB, 1MiB
// (bytes) — optionally followed by /s. 0 is no limit. "Mbps" and "Mb" are
// refused: some read them as bits, tc as bytes.
func ParseRate(s string) (int64, error) {
	text := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	number, factor := text, 1.0
	for _, u := range rateUnits {
		isBits := strings.HasSuffix(u.suffix, "bit")
		if isBits && strings.HasSuffix(strings.ToLower(text), u.suffix) || !isBits && strings.HasSuffix(text, u.suffix) {
			number, factor = text[:len(text)-len(u.suffix)], u.bytes
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(number), 64)
	bytes := v * factor
	if err != nil || bytes < 0 || math.IsInf(bytes, 0) || math.IsNaN(bytes) || bytes > math.MaxInt64/2 || v > 0 && bytes < 1 {
		return 0, fmt.Errorf("bandwidth %q: want bytes per second, or a number with a unit: 100Mbit, 1Gbit, 12.5MB, 500kB, 1MiB (0 = no limit)", s)
	}
	return int64(math.Round(bytes)), nil
}
