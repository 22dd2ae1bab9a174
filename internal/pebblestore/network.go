package pebblestore

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Network names the network a store belongs to.
type Network struct {
	// Genesis is the Blake2b-256 of the network's genesis file.
	Genesis [32]byte
	// About says, for people, which network that is: where its genesis
	// file was and when the network started. It is stored with the hash
	// and shown when a store is opened under another genesis.
	About string
}

func (n Network) String() string {
	if n.About == "" {
		return fmt.Sprintf("genesis %x…", n.Genesis[:8])
	}
	return fmt.Sprintf("genesis %x… (%s)", n.Genesis[:8], n.About)
}

func (n Network) encode() []byte { return append(n.Genesis[:], n.About...) }

func decodeNetwork(b []byte) (Network, bool) {
	var n Network
	if len(b) < len(n.Genesis) {
		return n, false
	}
	copy(n.Genesis[:], b)
	n.About = string(b[len(n.Genesis):])
	return n, true
}

// checkNetwork refuses a store without a stamp, or with another network's.
func (s *DB) checkNetwork(want Network, key []byte) error {
	v, closer, err := s.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return &Error{Store: s.name, Dir: s.dir,
			Err: fmt.Errorf("%w: it holds no network stamp: it was written by an older leiosnode, was never completed, or lost its MANIFEST", ErrCorrupt),
			Do:  s.resync()}
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	got, ok := decodeNetwork(v)
	if !ok {
		return &Error{Store: s.name, Dir: s.dir, Err: fmt.Errorf("%w: network stamp of %d bytes", ErrCorrupt, len(v)), Do: s.resync()}
	}
	if got.Genesis != want.Genesis {
		return &Error{Store: s.name, Dir: s.dir,
			Err: fmt.Errorf("%w: it was created under %s, this node runs %s", ErrOtherNetwork, got, want),
			Do:  fmt.Sprintf("start it with that genesis, or delete %s (this store only) to join this network from its peers", s.dir)}
	}
	return nil
}
