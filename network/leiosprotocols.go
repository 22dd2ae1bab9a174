package network

import "fmt"

// LeiosProtocols chooses the Leios mini-protocol sets a node serves and
// speaks: CIP-0164's (/leios/announce/1, /leios/votes/1,
// /leios/blocknotify/1, /leios/fetch/2), the prototype's
// (/leios/notify/1, /leios/fetch/1), or both — then its clients speak the
// CIP's to a peer that serves them and the prototype's to one that does
// not. The zero value is both.
type LeiosProtocols uint8

const (
	LeiosBoth LeiosProtocols = iota
	LeiosCIP
	LeiosPrototype
)

// ParseLeiosProtocols reads "both" (or ""), "cip" or "prototype".
func ParseLeiosProtocols(s string) (LeiosProtocols, error) {
	switch s {
	case "", "both":
		return LeiosBoth, nil
	case "cip":
		return LeiosCIP, nil
	case "prototype":
		return LeiosPrototype, nil
	}
	return 0, fmt.Errorf("network: Leios protocols %q: want cip, prototype or both", s)
}

func (p LeiosProtocols) String() string {
	switch p {
	case LeiosCIP:
		return "cip"
	case LeiosPrototype:
		return "prototype"
	}
	return "both"
}

// CIP reports whether the CIP's set is served and spoken.
func (p LeiosProtocols) CIP() bool { return p != LeiosPrototype }

// Prototype reports whether the prototype's set is served and spoken.
func (p LeiosProtocols) Prototype() bool { return p != LeiosCIP }
