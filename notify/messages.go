package notify

import (
	"errors"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Message tags, as in the Haskell leios-prototype's LeiosNotify codec
// (votes, tag 4, as docs/protocol.md lists them).
const (
	TagRequestNext       uint64 = 0
	TagBlockAnnouncement uint64 = 1
	TagBlockOffer        uint64 = 2
	TagBlockTxsOffer     uint64 = 3
	TagVotes             uint64 = 4
	TagDone              uint64 = 5
)

// MaxVotesPerMessage bounds a vote batch: 500 votes of at most 94 bytes
// each stay under the server state's 64 KiB limit.
const MaxVotesPerMessage = 500

// MsgRequestNext `[0]` asks for the next notification.
type MsgRequestNext struct {
	_ struct{} `cbor:",toarray"`
}

// MsgBlockAnnouncement `[1, header]` announces an RB header, its original
// bytes as one CBOR item.
type MsgBlockAnnouncement struct {
	_      struct{} `cbor:",toarray"`
	Header *block.Header
}

// Embeds reports the header as embedded: its bytes are the issuer's,
// relayed as they came (the engine's MinimalEncoding leaves them to
// block.DecodeHeader).
func (*MsgBlockAnnouncement) Embeds(i int) bool { return i == 0 }

// MsgBlockOffer `[2, point, eb_size]`: the server holds the EB body of
// point, eb_size bytes (a Word32 in the Haskell codec).
type MsgBlockOffer struct {
	_      struct{} `cbor:",toarray"`
	Point  block.Point
	EbSize uint32
}

// MsgBlockTxsOffer `[3, point]`: the server holds the whole closure of
// point.
type MsgBlockTxsOffer struct {
	_     struct{} `cbor:",toarray"`
	Point block.Point
}

// MsgVotes `[4, [* vote]]` carries a batch of votes.
type MsgVotes struct {
	_     struct{} `cbor:",toarray"`
	Votes []block.Vote
}

// MsgDone `[5]` ends the protocol.
type MsgDone struct {
	_ struct{} `cbor:",toarray"`
}

func (*MsgRequestNext) Tag() uint64       { return TagRequestNext }
func (*MsgBlockAnnouncement) Tag() uint64 { return TagBlockAnnouncement }
func (*MsgBlockOffer) Tag() uint64        { return TagBlockOffer }
func (*MsgBlockTxsOffer) Tag() uint64     { return TagBlockTxsOffer }
func (*MsgVotes) Tag() uint64             { return TagVotes }
func (*MsgDone) Tag() uint64              { return TagDone }

// errOriginPoint: an offer names the origin, which no EB has.
var errOriginPoint = errors.New("offer of the origin point")

// Validate rejects a null header, which CBOR decoding would let through.
func (m *MsgBlockAnnouncement) Validate() error {
	if m.Header == nil {
		return errors.New("announcement without a header")
	}
	return nil
}

// Validate rejects an offer of the origin.
func (m *MsgBlockOffer) Validate() error {
	if m.Point.IsOrigin() {
		return errOriginPoint
	}
	return nil
}

// Validate rejects an offer of the origin.
func (m *MsgBlockTxsOffer) Validate() error {
	if m.Point.IsOrigin() {
		return errOriginPoint
	}
	return nil
}

// Validate rejects an empty batch (it would answer a request with nothing)
// and one over MaxVotesPerMessage.
func (m *MsgVotes) Validate() error {
	switch {
	case len(m.Votes) == 0:
		return errors.New("empty vote batch")
	case len(m.Votes) > MaxVotesPerMessage:
		return errors.New("vote batch over MaxVotesPerMessage")
	}
	return nil
}

var (
	_ protocol.Validator = (*MsgBlockAnnouncement)(nil)
	_ protocol.Validator = (*MsgBlockOffer)(nil)
	_ protocol.Validator = (*MsgBlockTxsOffer)(nil)
	_ protocol.Validator = (*MsgVotes)(nil)
)
