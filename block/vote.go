package block

import (
	"encoding/binary"
	"fmt"
)

// Vote is a committee member's vote for the EB announced by an RB, as the
// prototype's streams carry it: `[rb_hash, voter_seat, signature]`, the
// signature a BLS12-381 MinSig signature over the network's vote message
// (Encoding.VoteMessage) for that RB's announcement. The CIP's streams
// carry `[slot_no, eb_hash, voter_id, signature]` instead (notify), named
// by the RB's slot and EB; the node files every vote under its RB.
type Vote struct {
	_         struct{} `cbor:",toarray"`
	RbHash    Hash
	VoterSeat uint16
	Signature Bytes48
}

// VoteSubject is what a vote is cast on: the EB an RB announced, named by
// the RB's hash and by its slot and the EB's hash. Which of them the
// signature covers is the network's Encoding.
type VoteSubject struct {
	RbHash Hash
	Slot   uint64 // the announcing RB's
	EbHash Hash
}

// SubjectOf is the subject of the votes on h's announcement; false if h
// announces no EB.
func SubjectOf(h *Header) (VoteSubject, bool) {
	if h.Announcement == nil {
		return VoteSubject{}, false
	}
	return VoteSubject{RbHash: h.Hash(), Slot: h.Slot, EbHash: h.Announcement.EbHash}, true
}

func (s VoteSubject) String() string {
	return fmt.Sprintf("EB %s at slot %d (RB %s)", s.EbHash.Short(), s.Slot, s.RbHash.Short())
}

// VoteMessage is the message a vote on s signs on a network of encoding e:
// CIPVoteMessage for EncodingCIP, PrototypeVoteMessage otherwise.
func (e Encoding) VoteMessage(s VoteSubject) []byte {
	if e == EncodingCIP {
		return CIPVoteMessage(s.Slot, s.EbHash)
	}
	return PrototypeVoteMessage(s.RbHash)
}

// CIPVoteMessage is CIP-0164's `concat(slot_no, endorser_block_hash)`:
// the slot as 8 bytes, big-endian, then the 32-byte EB hash — 40 bytes.
// The CIP does not say how slot_no is written; a fixed width keeps the
// concatenation unambiguous, and 8 bytes big-endian is a uint64's
// network order (docs/protocol.md, "Where CIP-0164 is silent or imprecise").
func CIPVoteMessage(slot uint64, ebHash Hash) []byte {
	msg := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(ebHash)), slot)
	return append(msg, ebHash[:]...)
}

// PrototypeVoteMessage is the prototype's vote message: the CBOR byte
// string encoding of the RB hash (0x5820 ‖ rb_hash).
func PrototypeVoteMessage(rbHash Hash) []byte { return append([]byte{0x58, 0x20}, rbHash[:]...) }
