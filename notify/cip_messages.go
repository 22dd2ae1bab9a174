package notify

import (
	"errors"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Message tags of CIP-0164's three notification streams. The CIP gives
// their messages, not their tags: these are its table's order within each
// stream, done last.

// TagLeiosRequestNext is the request of all three streams: one message.
const TagLeiosRequestNext uint64 = 0

// /leios/announce/1: its announcement is the prototype's
// MsgBlockAnnouncement, tag 1 in both.
const TagLeiosAnnounceDone uint64 = 2

// /leios/votes/1.
const (
	TagLeiosVote      uint64 = 1
	TagLeiosVotesDone uint64 = 2
)

// /leios/blocknotify/1.
const (
	TagLeiosBlockOffer      uint64 = 1
	TagLeiosBlockTxsOffer   uint64 = 2
	TagLeiosBlockNotifyDone uint64 = 3
)

// MaxGrant bounds the tokens one request grants: a client commits to
// buffer no more than it grants, and a server needs no more than this to
// send without waiting.
const MaxGrant = 1000

// MsgLeiosRequestNext `[0, n]` grants the server n more notifications
// (MsgLeiosAnnounceRequestNext, MsgLeiosVotesRequestNext,
// MsgLeiosBlockNotifyRequestNext), 1 ≤ n ≤ MaxGrant.
type MsgLeiosRequestNext struct {
	_ struct{} `cbor:",toarray"`
	N uint64
}

// MsgLeiosVote `[1, [slot, eb_hash, voter_id, signature]]` carries one
// vote as the CIP's leios_vote: the announcing RB's slot, the EB's hash,
// the voter's committee index (within 16 bits here: no committee has more
// seats) and its BLS signature. What the signature signs: docs/protocol.md,
// "Mini-protocols".
type MsgLeiosVote struct {
	_    struct{} `cbor:",toarray"`
	Vote LeiosVote
}

// LeiosVote is the CIP's leios_vote.
type LeiosVote struct {
	_         struct{} `cbor:",toarray"`
	Slot      uint64
	EbHash    block.Hash
	VoterID   uint16
	Signature block.Bytes48
}

// MsgLeiosBlockOffer `[1, slot, eb_hash, block_height]`: the server holds
// the body of the EB announced at slot by the RB of block_height.
type MsgLeiosBlockOffer struct {
	_           struct{} `cbor:",toarray"`
	Slot        uint64
	EbHash      block.Hash
	BlockHeight uint64
}

// MsgLeiosBlockTxsOffer `[2, slot, eb_hash, block_height]`: the server
// holds every tx of that EB.
type MsgLeiosBlockTxsOffer MsgLeiosBlockOffer

// MsgLeiosDone `[2]` ends /leios/announce/1 or /leios/votes/1.
type MsgLeiosDone struct {
	_ struct{} `cbor:",toarray"`
}

// MsgLeiosBlockNotifyDone `[3]` ends /leios/blocknotify/1.
type MsgLeiosBlockNotifyDone struct {
	_ struct{} `cbor:",toarray"`
}

func (*MsgLeiosRequestNext) Tag() uint64     { return TagLeiosRequestNext }
func (*MsgLeiosVote) Tag() uint64            { return TagLeiosVote }
func (*MsgLeiosBlockOffer) Tag() uint64      { return TagLeiosBlockOffer }
func (*MsgLeiosBlockTxsOffer) Tag() uint64   { return TagLeiosBlockTxsOffer }
func (*MsgLeiosDone) Tag() uint64            { return TagLeiosAnnounceDone }
func (*MsgLeiosBlockNotifyDone) Tag() uint64 { return TagLeiosBlockNotifyDone }

// Grants is how many notifications the request lets the server send.
func (m *MsgLeiosRequestNext) Grants() int { return int(m.N) }

// Validate refuses a grant of none (it would leave the stream stuck) and
// one over MaxGrant.
func (m *MsgLeiosRequestNext) Validate() error {
	if m.N < 1 || m.N > MaxGrant {
		return errors.New("request next grants fewer than 1 or more than MaxGrant")
	}
	return nil
}

// point is the EB point an offer names.
func (m *MsgLeiosBlockOffer) point() block.Point    { return block.Point{Slot: m.Slot, Hash: m.EbHash} }
func (m *MsgLeiosBlockTxsOffer) point() block.Point { return (*MsgLeiosBlockOffer)(m).point() }

// Validate rejects an offer of the origin.
func (m *MsgLeiosBlockOffer) Validate() error {
	if m.point().IsOrigin() {
		return errOriginPoint
	}
	return nil
}

// Validate rejects an offer of the origin.
func (m *MsgLeiosBlockTxsOffer) Validate() error { return (*MsgLeiosBlockOffer)(m).Validate() }

var (
	_ protocol.Granter   = (*MsgLeiosRequestNext)(nil)
	_ protocol.Validator = (*MsgLeiosRequestNext)(nil)
	_ protocol.Validator = (*MsgLeiosBlockOffer)(nil)
	_ protocol.Validator = (*MsgLeiosBlockTxsOffer)(nil)
)
