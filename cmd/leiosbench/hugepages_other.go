//go:build !linux

package main

// hugePageWords faults words in; huge pages are a Linux hint.
func hugePageWords(words []uint64) {
	for i := 0; i < len(words); i += 4096 / 8 {
		words[i] = 1
	}
}
