package protocol

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// The walk behind MinimalEncoding: every head minimal, whatever the item —
// integers, strings and their chunks, arrays, maps, tags — and floats and
// simple values taken as they are.
func TestMinimalItem(t *testing.T) {
	for _, tc := range []struct {
		hex     string
		minimal bool
	}{
		{"17", true}, {"1818", true}, {"1817", false}, {"190100", true}, {"1900ff", false},
		{"1a00010000", true}, {"1a0000ffff", false}, {"1b0000000100000000", true}, {"1b00000000ffffffff", false},
		{"37", true}, {"3817", false},
		{"43 010203", true}, {"5803 010203", false}, {"63 616263", true}, {"7803 616263", false},
		{"5f 41 01 42 0203 ff", true}, {"5f 41 01 5802 0203 ff", false},
		{"83 01 02 03", true}, {"9803 01 02 03", false}, {"83 01 1802 03", false},
		{"9f 01 82 02 03 ff", true}, {"9f 01 82 02 1803 ff", false},
		{"a1 01 02", true}, {"b801 01 02", false}, {"a1 1801 02", false}, {"bf 01 02 ff", true},
		{"c1 01", true}, {"d801 01", false}, {"d818 41 01", true}, {"c1 1801", false},
		{"f4", true}, {"f6", true}, {"f820", true}, {"f93c00", true}, {"fa3f800000", true}, {"fb3ff0000000000000", true},
		{"82 f93c00 1801", false},
	} {
		b, err := hex.DecodeString(strings.ReplaceAll(tc.hex, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		rest, err := minimalItem(b, 0)
		switch {
		case tc.minimal && (err != nil || len(rest) != 0):
			t.Errorf("%s: %v, %d bytes left; want minimal", tc.hex, err, len(rest))
		case !tc.minimal && !errors.Is(err, ErrNonMinimal):
			t.Errorf("%s: %v; want ErrNonMinimal", tc.hex, err)
		}
	}
}
