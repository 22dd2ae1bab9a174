package protocolset

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// TestParse: each valid name reads as its Set and writes back as itself,
// by Parse and String and through JSON; a name that is no Set's — a typo,
// a list, another case, the empty string — is refused with ErrUnknown in
// one message that names every valid one.
func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name string
		want Set
	}{
		{"cip", CIP},
		{"prototype", Prototype},
		{"both", Both},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.name)
			if err != nil || s != tt.want {
				t.Fatalf("Parse(%q) = %v, %v; want %v", tt.name, s, err, tt.want)
			}
			if s.String() != tt.name {
				t.Errorf("%v.String() = %q", s, s.String())
			}
			b, err := json.Marshal(struct{ S Set }{s})
			if err != nil {
				t.Fatal(err)
			}
			var back struct{ S Set }
			if err := json.Unmarshal(b, &back); err != nil || back.S != s {
				t.Errorf("%s through JSON: %v, %v", b, back.S, err)
			}
		})
	}
	for _, name := range []string{"", "cipx", "CIP", "cip,prototype", "mixed", " both"} {
		_, err := Parse(name)
		if !errors.Is(err, ErrUnknown) {
			t.Errorf("Parse(%q): %v, want ErrUnknown", name, err)
			continue
		}
		want := `"` + name + `" is not a Leios protocol set: want cip, prototype or both`
		if err.Error() != want {
			t.Errorf("Parse(%q): %q, want %q", name, err, want)
		}
		var s Set
		if err := json.Unmarshal([]byte(`"`+name+`"`), &s); !errors.Is(err, ErrUnknown) {
			t.Errorf("JSON %q: %v, want ErrUnknown", name, err)
		}
	}
}

// TestTheList: Names and All are the one list, in the same order, each
// Set once; the zero value, a config without the setting, is Both; a
// value that is no Set is not written.
func TestTheList(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"cip", "prototype", "both"}) {
		t.Errorf("Names() = %v", got)
	}
	for i, s := range All() {
		if s.String() != Names()[i] {
			t.Errorf("All()[%d] = %v, Names()[%d] = %q", i, s, i, Names()[i])
		}
	}
	all := All()
	all[0] = Both // a caller's copy: the list stays as it is
	if All()[0] != CIP {
		t.Error("All() hands out the list itself")
	}
	var zero Set
	if zero != Both {
		t.Errorf("the zero value is %v, not both", zero)
	}
	if _, err := Set(7).MarshalText(); !errors.Is(err, ErrUnknown) {
		t.Errorf("Set(7) written: %v", err)
	}
}

// TestWhatEachServes: Both serves either set, CIP and Prototype only
// their own.
func TestWhatEachServes(t *testing.T) {
	for _, tt := range []struct {
		set            Set
		cip, prototype bool
	}{
		{Both, true, true},
		{CIP, true, false},
		{Prototype, false, true},
	} {
		if tt.set.CIP() != tt.cip || tt.set.Prototype() != tt.prototype {
			t.Errorf("%v: CIP %v, Prototype %v", tt.set, tt.set.CIP(), tt.set.Prototype())
		}
	}
}
