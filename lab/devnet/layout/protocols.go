package layout

import (
	"fmt"
	"strings"

	"github.com/leiosnode/leiosnode/leios/protocolset"
)

// mixed is the one name Protocols reads besides the sets': not a set a
// node speaks, but the devnet's choice to hand the pools every set in turn.
const mixed = "mixed"

// Protocols are the Leios mini-protocol sets a devnet's pools serve and
// speak: one Set for every pool, or Mixed — pool i speaks the i-th set of
// protocolset.All() in turn (cip, prototype, both), so that the pools of
// the two sets reach each other through the third kind. The zero value is
// every pool speaking both. It reads and writes its name as text, so the
// CLI's --protocols decodes straight into it.
type Protocols struct {
	Set   protocolset.Set
	Mixed bool
}

// ProtocolsNames are the names Protocols reads: protocolset.Names, then
// mixed.
func ProtocolsNames() []string { return append(protocolset.Names(), mixed) }

// Of is the set pool i speaks.
func (p Protocols) Of(pool int) protocolset.Set {
	if p.Mixed {
		sets := protocolset.All()
		return sets[pool%len(sets)]
	}
	return p.Set
}

// String is the name: a set's, or mixed.
func (p Protocols) String() string {
	if p.Mixed {
		return mixed
	}
	return p.Set.String()
}

// MarshalText writes the name.
func (p Protocols) MarshalText() ([]byte, error) {
	if p.Mixed {
		return []byte(mixed), nil
	}
	return p.Set.MarshalText()
}

// UnmarshalText reads a set's name (protocolset.Parse) or mixed; anything
// else is refused, naming every valid one.
func (p *Protocols) UnmarshalText(b []byte) error {
	if string(b) == mixed {
		*p = Protocols{Mixed: true}
		return nil
	}
	set, err := protocolset.Parse(string(b))
	if err != nil {
		return fmt.Errorf("%q is neither a Leios protocol set nor mixed: want %s or %s", b, strings.Join(protocolset.Names(), ", "), mixed)
	}
	*p = Protocols{Set: set}
	return nil
}
