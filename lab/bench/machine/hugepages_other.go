//go:build !linux

package machine

// HugePageWords faults words in; huge pages are a Linux hint.
func HugePageWords(words []uint64) {
	for i := 0; i < len(words); i += 4096 / 8 {
		words[i] = 1
	}
}
