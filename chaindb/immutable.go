package chaindb

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/leiosnode/leiosnode/block"
)

// The immutable tip is also kept outside Pebble, in a marker file
// (pebblestore.Marker) moved, and its directory synced, after each batch
// that advances it. Pebble replays its write-ahead log batch by batch, so a
// store whose log lost its tail (a disk that lied about a sync, a file cut
// short) reopens consistent but older, and nothing inside Pebble can tell.
// The immutable tip must not go back: other stores prune against it and
// the node has told its peers it is final. Open compares the two and
// refuses a store whose immutable tip went back. The marker moves after
// its batch is synced, so it is never ahead of a store that lost nothing.
const immutableMarker = "immutable-tip"

// openImmutableMarker opens the marker and checks imm, the immutable tip
// read from Pebble, against it (checkImmutableMark). Only a marker lost
// and accepted (Options.AcceptLostImmutableTip) is written: moved to imm.
func (db *DB) openImmutableMarker(imm block.Tip) error {
	m, value, err := db.store.Marker(immutableMarker)
	if err != nil {
		return err
	}
	db.immutable = m
	if err := db.checkImmutableMark(imm, value); err != nil {
		return err
	}
	if value == "" && !imm.Point.IsOrigin() {
		db.log.Warn("immutable-tip marker file missing: taking the stored immutable tip as final, as accepted", "immutableTip", imm)
		if err := m.Move(encodeMark(imm)); err != nil {
			return fmt.Errorf("chaindb: immutable-tip marker: %w", err)
		}
	}
	return nil
}

// checkImmutableMark refuses imm, the immutable tip read from Pebble, if it
// is behind value, the marker's, or off the selected chain at the marked
// block, or if the marker is gone (value "") while imm is past origin,
// unless that loss is accepted.
func (db *DB) checkImmutableMark(imm block.Tip, value string) error {
	switch {
	case value == "" && imm.Point.IsOrigin():
		return nil // it never advanced
	case value == "" && !db.opts.AcceptLostImmutableTip:
		return db.store.Corrupt(fmt.Errorf("its immutable-tip marker file is gone while its immutable tip is #%d %s, "+
			"so a lost end of its write-ahead log, and with it blocks the node had made final, cannot be ruled out "+
			"(to keep it and take #%d as final, losing any final blocks past it, start the node with --accept-lost-immutable-tip)",
			imm.BlockNumber, imm.Point.Hash.Short(), imm.BlockNumber))
	case value == "":
		return nil // accepted: openImmutableMarker marks imm
	}
	marked, err := decodeMark(value)
	if err != nil {
		return db.store.Corrupt(fmt.Errorf("immutable-tip marker %q: %w", value, err))
	}
	if imm.BlockNumber < marked.BlockNumber {
		return db.store.Corrupt(fmt.Errorf("its immutable tip went back from #%d %s to #%d %s: "+
			"the end of its write-ahead log was lost, and with it blocks the node had made final",
			marked.BlockNumber, marked.Point.Hash.Short(), imm.BlockNumber, imm.Point.Hash.Short()))
	}
	hash, ok, err := get(db.store, numberKey(marked.BlockNumber))
	if err != nil {
		return fmt.Errorf("chaindb: %w", err)
	}
	if !ok || block.Hash(hash) != marked.Point.Hash {
		return db.store.Corrupt(fmt.Errorf("its selected chain does not hold #%d %s, a block it had made final",
			marked.BlockNumber, marked.Point.Hash.Short()))
	}
	return nil
}

// markImmutable moves the marker to the root, after the batch that made it
// the immutable tip was committed with syncSelection. Callers hold addMu.
func (db *DB) markImmutable() error {
	if err := db.immutable.Move(encodeMark(db.root.tip())); err != nil {
		return fmt.Errorf("chaindb: immutable-tip marker: %w", err)
	}
	return nil
}

// A marker's value is "number-hash" (decimal, hex), part of a file name.
func encodeMark(t block.Tip) string {
	return fmt.Sprintf("%d-%s", t.BlockNumber, hex.EncodeToString(t.Point.Hash[:]))
}

// decodeMark reads the number and hash of encodeMark; the slot is not kept.
func decodeMark(v string) (block.Tip, error) {
	var t block.Tip
	number, hexHash, ok := strings.Cut(v, "-")
	n, err := strconv.ParseUint(number, 10, 64)
	if !ok || err != nil {
		return t, fmt.Errorf("no block number")
	}
	h, err := hex.DecodeString(hexHash)
	if err != nil || len(h) != len(t.Point.Hash) {
		return t, fmt.Errorf("no block hash")
	}
	t.BlockNumber = n
	copy(t.Point.Hash[:], h)
	return t, nil
}
