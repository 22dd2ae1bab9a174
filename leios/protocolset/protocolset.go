// Package protocolset owns the Leios mini-protocol sets a node serves and
// speaks — CIP-0164's, the Haskell prototype's, or both — and is the one
// place their names are listed and read. A config's leiosProtocols, the
// devnet's --protocols, the pipeline's options and the notify and fetch
// services all hold a Set, read once from its name by Parse (or
// UnmarshalText, so that a config's JSON decodes straight into it); none
// of them keeps a list of names of its own.
//
// It is the Leios layer's in what it means, and a foundation in where it
// ranks: the config that holds a Set ranks below the notify and fetch
// services that choose their protocols by it and below the pipeline, so
// the type lives beneath all of them, and the libp2p host, which must not
// know Leios protocol sets, never sees it. It imports no package of the
// project and must never: a Set is a name and two yes-or-no answers, not a
// protocol — it knows no protocol ID, stream or peer.
package protocolset

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Set is the Leios mini-protocol sets a node serves and speaks:
// CIP-0164's (/leios/announce/1, /leios/votes/1, /leios/blocknotify/1,
// /leios/fetch/2), the prototype's (/leios/notify/1, /leios/fetch/1), or
// both — then its clients speak the CIP's to a peer that serves them and
// the prototype's to one that does not. Either set carries the same
// bytes: the network's encoding is the genesis's, never a Set's.
//
// The zero value is Both, what a config without leiosProtocols speaks.
type Set uint8

const (
	Both      Set = iota // the CIP's with a peer that serves them, else the prototype's
	CIP                  // CIP-0164's alone
	Prototype            // the Haskell prototype's alone
)

// sets are the valid Sets, in the order their names are listed and a
// mixed devnet hands them to its pools. Read only.
var sets = [...]Set{CIP, Prototype, Both}

// ErrUnknown is what a name that is no Set's is refused with; the error
// says the valid names after it.
var ErrUnknown = errors.New("not a Leios protocol set")

// All returns the valid Sets, in the order Names lists them.
func All() []Set { return slices.Clone(sets[:]) }

// Names returns the valid Sets' names: cip, prototype, both.
func Names() []string {
	names := make([]string, len(sets))
	for i, s := range sets {
		names[i] = s.String()
	}
	return names
}

// Parse reads a Set's name, one of Names; anything else, the empty string
// included, is refused with ErrUnknown and the valid names.
func Parse(name string) (Set, error) {
	for _, s := range sets {
		if name == s.String() {
			return s, nil
		}
	}
	return 0, fmt.Errorf("%q is %w: want %s", name, ErrUnknown, want())
}

// want is the valid names for a message: "cip, prototype or both".
func want() string {
	names := Names()
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// String is the Set's name.
func (s Set) String() string {
	switch s {
	case Both:
		return "both"
	case CIP:
		return "cip"
	case Prototype:
		return "prototype"
	}
	return fmt.Sprintf("Set(%d)", uint8(s))
}

// MarshalText writes the Set's name; a value that is no Set is refused.
func (s Set) MarshalText() ([]byte, error) {
	if !slices.Contains(sets[:], s) {
		return nil, fmt.Errorf("%s is %w: want %s", s, ErrUnknown, want())
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads the Set's name (Parse).
func (s *Set) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// CIP reports whether the CIP's set is served and spoken.
func (s Set) CIP() bool { return s != Prototype }

// Prototype reports whether the prototype's set is served and spoken.
func (s Set) Prototype() bool { return s != CIP }
