package layout

import (
	"strings"
	"testing"

	"github.com/leiosnode/leiosnode/leios/protocolset"
)

// TestProtocols: each set's name makes every pool speak that set, mixed
// hands the pools the sets in the one list's order, round and round; each
// name reads back as itself; anything else is refused naming every valid
// name.
func TestProtocols(t *testing.T) {
	for _, set := range protocolset.All() {
		var p Protocols
		if err := p.UnmarshalText([]byte(set.String())); err != nil || p.Mixed || p.Of(0) != set || p.Of(4) != set || p.String() != set.String() {
			t.Errorf("%s: %+v, %v", set, p, err)
		}
	}
	var p Protocols
	if err := p.UnmarshalText([]byte("mixed")); err != nil || !p.Mixed || p.String() != "mixed" {
		t.Fatalf("mixed: %+v, %v", p, err)
	}
	sets := protocolset.All()
	for i := range 2 * len(sets) {
		if p.Of(i) != sets[i%len(sets)] {
			t.Errorf("mixed: pool %d speaks %s", i, p.Of(i))
		}
	}
	if (Protocols{}).Of(1) != protocolset.Both {
		t.Error("the zero value is not both")
	}
	err := p.UnmarshalText([]byte("cip,prototype"))
	if err == nil || !strings.HasSuffix(err.Error(), "want "+strings.Join(protocolset.Names(), ", ")+" or mixed") {
		t.Errorf("cip,prototype: %v", err)
	}
}
