package protocol

import (
	"fmt"
	"time"

	"github.com/leiosnode/leiosnode/internal/cpuwork"
)

// Agency says which side may send in a state. The client is the side that
// opened the stream.
type Agency uint8

const (
	Nobody Agency = iota // a terminal state: no one may send
	Client
	Server
)

func (a Agency) String() string {
	switch a {
	case Client:
		return "client"
	case Server:
		return "server"
	default:
		return "nobody"
	}
}

// other is the opposite side; Nobody stays Nobody.
func (a Agency) other() Agency {
	switch a {
	case Client:
		return Server
	case Server:
		return Client
	default:
		return Nobody
	}
}

// State names a state of a protocol's state machine.
type State string

// StateSpec declares one state.
type StateSpec struct {
	Agency Agency
	// Next maps each message tag allowed in this state to the state it leads
	// to. Any other message is ErrUnexpectedMessage.
	Next map[uint64]State
	// MaxSize is the largest message body (after the length prefix), in
	// bytes, accepted in this state. Required for states with agency.
	MaxSize int
	// Timeout bounds how long the side without agency waits for the next
	// message; past it the session ends with ErrTimeout. Required for
	// states with agency: no wait is endless (see timeouts.go).
	Timeout time.Duration
	// Tokens makes this a counted state, as CIP-0164's request-N streams:
	// the message entering it grants N tokens (Granter), each message sent
	// in it spends one, and the state's Next is taken with the last one;
	// until then the session stays here.
	Tokens bool
}

// Message is one protocol message. Its CBOR encoding (a toarray struct) is
// the payload; the engine adds the tag in front.
type Message interface {
	Tag() uint64
}

// Granter is a message that enters a counted state (StateSpec.Tokens)
// and grants how many messages the other side may send in it. Its
// Validate must refuse a grant below 1.
type Granter interface {
	Message
	Grants() int
}

// Validator is implemented by messages with rules beyond their CBOR shape
// (a field that must not be null, say). Decode calls it.
type Validator interface {
	Validate() error
}

// Spec declares a mini-protocol. A Spec is read-only once built; sessions
// share it.
type Spec struct {
	// Name is the protocol's short name; its libp2p protocol ID is
	// /leios/<Name>/<Version>.
	Name string
	// Version is the protocol's version in its ID; 0 is version 1.
	Version int
	Initial State
	States  map[State]StateSpec
	// Messages returns a new, empty message for each tag the protocol knows.
	Messages map[uint64]func() Message
	// MaxPipelined is how many messages a side may send ahead while the
	// other side holds agency (0: none, strict alternation).
	MaxPipelined int
	// IndefiniteLengths lets this protocol's messages carry indefinite-length
	// items (LeiosFetch's bitmaps are an indefinite-length map). The message
	// array itself must still be definite; the messages' own decoders must
	// enforce which items inside may be indefinite (Definite helps). Without
	// it the engine refuses every indefinite length (ErrIndefiniteLength).
	IndefiniteLengths bool
	// ForbidTags refuses a message that carries a CBOR tag anywhere
	// (ErrTagged), as the Haskell Leios prototype's codecs do: their txs are
	// plain byte strings, never tag 24. Without it tags pass, for the
	// protocols that carry Cardano txs as CBOR (tag 258 on sets).
	ForbidTags bool
	// MinimalEncoding refuses a message with an integer, a length, a count
	// or a tag number longer than it needs to be (`18 05` for 5:
	// ErrNonMinimal), as the Leios protocols' CDDL and docs/protocol.md have
	// it; the generic decoder reads any width. Items a message embeds as
	// they were made elsewhere (Embedder) are left to their own codecs.
	MinimalEncoding bool
	// Work is the kind of work the protocol's sessions do, both ends, for
	// the CPU accounting (package cpuwork): the host labels every session's
	// goroutine with it. Empty: network.
	Work cpuwork.Kind
}

// ID is the libp2p protocol ID.
func (sp *Spec) ID() string { return fmt.Sprintf("/leios/%s/%d", sp.Name, max(sp.Version, 1)) }

// Label names the protocol in metrics, logs and limits: Name, with the
// version appended from version 2 on (fetch2), so two versions of one
// protocol are told apart.
func (sp *Spec) Label() string {
	if sp.Version <= 1 {
		return sp.Name
	}
	return fmt.Sprintf("%s%d", sp.Name, sp.Version)
}

// Validate checks that the Spec is complete: every state it names exists,
// every tag has a constructor whose message reports that tag, and states
// where someone has agency have a size limit and a timeout.
func (sp *Spec) Validate() error {
	if _, ok := sp.States[sp.Initial]; !ok {
		return fmt.Errorf("protocol %s: initial state %q not declared", sp.Name, sp.Initial)
	}
	for name, st := range sp.States {
		if st.Agency == Nobody {
			if len(st.Next) != 0 || st.Tokens {
				return fmt.Errorf("protocol %s: terminal state %q has transitions", sp.Name, name)
			}
			continue
		}
		if st.MaxSize <= 0 {
			return fmt.Errorf("protocol %s: state %q has no size limit", sp.Name, name)
		}
		if st.Timeout <= 0 {
			return fmt.Errorf("protocol %s: state %q has no timeout", sp.Name, name)
		}
		for tag, next := range st.Next {
			if _, ok := sp.States[next]; !ok {
				return fmt.Errorf("protocol %s: state %q: tag %d leads to undeclared state %q", sp.Name, name, tag, next)
			}
			newMsg, ok := sp.Messages[tag]
			if !ok {
				return fmt.Errorf("protocol %s: state %q: tag %d has no message type", sp.Name, name, tag)
			}
			if got := newMsg().Tag(); got != tag {
				return fmt.Errorf("protocol %s: message for tag %d reports tag %d", sp.Name, tag, got)
			}
			if _, grants := newMsg().(Granter); sp.States[next].Tokens && !grants && next != name {
				return fmt.Errorf("protocol %s: tag %d enters counted state %q without granting tokens", sp.Name, tag, next)
			}
		}
	}
	return nil
}

// Timeouts override the timeouts of some of a Spec's states, by state.
type Timeouts map[State]time.Duration

// WithTimeouts returns a copy of sp whose states in t have t's timeouts:
// how a protocol's ServiceOptions shorten them for tests. A state sp does
// not declare is ignored.
func (sp *Spec) WithTimeouts(t Timeouts) *Spec {
	if len(t) == 0 {
		return sp
	}
	c := *sp
	c.States = make(map[State]StateSpec, len(sp.States))
	for name, st := range sp.States {
		if d, ok := t[name]; ok {
			st.Timeout = d
		}
		c.States[name] = st
	}
	return &c
}

// maxSize is the largest limit among states where side has agency: the
// bound for a message that side sends ahead (pipelined), whose state is not
// known until it is applied.
func (sp *Spec) maxSize(side Agency) int {
	n := 0
	for _, st := range sp.States {
		if st.Agency == side {
			n = max(n, st.MaxSize)
		}
	}
	return n
}
