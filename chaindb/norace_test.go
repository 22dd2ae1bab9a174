//go:build !race

package chaindb

const raceEnabled = false
