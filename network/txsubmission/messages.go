package txsubmission

import (
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// Message tags, as in Cardano's TxSubmission2 codec.
const (
	TagRequestTxIds uint64 = 0
	TagReplyTxIds   uint64 = 1
	TagRequestTxs   uint64 = 2
	TagReplyTxs     uint64 = 3
	TagDone         uint64 = 4
	TagInit         uint64 = 6
)

// MsgInit `[6]` opens the protocol; the client sends it first.
type MsgInit struct {
	_ struct{} `cbor:",toarray"`
}

// MsgRequestTxIds `[0, blocking, ack, req]`: the server acknowledges the Ack
// oldest announced ids and asks for up to Req new ones. A blocking request
// is answered once there is at least one; a non-blocking one at once.
type MsgRequestTxIds struct {
	_        struct{} `cbor:",toarray"`
	Blocking bool
	Ack      uint16
	Req      uint16
}

// MsgReplyTxIds `[1, [* [tx_hash, size]]]` announces txs, oldest first.
type MsgReplyTxIds struct {
	_   struct{} `cbor:",toarray"`
	IDs []TxIDAndSize
}

// TxIDAndSize `[tx_hash, size]` names an announced tx: the Blake2b-256 hash
// of the whole serialized tx (the EB and tx cache key, not Cardano's body
// hash) and its size in bytes.
type TxIDAndSize struct {
	_    struct{} `cbor:",toarray"`
	ID   block.Hash
	Size uint32
}

// MsgRequestTxs `[2, [* tx_hash]]` asks for announced txs by hash.
type MsgRequestTxs struct {
	_   struct{} `cbor:",toarray"`
	IDs []block.Hash
}

// MsgReplyTxs `[3, [* bytes]]` carries the requested txs still held, in
// request order, each its serialized bytes as a CBOR byte string.
type MsgReplyTxs struct {
	_   struct{} `cbor:",toarray"`
	Txs [][]byte
}

// MsgDone `[4]`: the client ends the protocol, in reply to a blocking
// request.
type MsgDone struct {
	_ struct{} `cbor:",toarray"`
}

func (*MsgInit) Tag() uint64         { return TagInit }
func (*MsgRequestTxIds) Tag() uint64 { return TagRequestTxIds }
func (*MsgReplyTxIds) Tag() uint64   { return TagReplyTxIds }
func (*MsgRequestTxs) Tag() uint64   { return TagRequestTxs }
func (*MsgReplyTxs) Tag() uint64     { return TagReplyTxs }
func (*MsgDone) Tag() uint64         { return TagDone }

// Validate rejects a null list, which CBOR decoding would let through as
// an empty one.
func (m *MsgReplyTxIds) Validate() error {
	if m.IDs == nil {
		return errors.New("reply tx ids: null list")
	}
	return nil
}

// Validate rejects a null list.
func (m *MsgRequestTxs) Validate() error {
	if m.IDs == nil {
		return errors.New("request txs: null list")
	}
	return nil
}

// Validate rejects a null list and an empty or null tx.
func (m *MsgReplyTxs) Validate() error {
	if m.Txs == nil {
		return errors.New("reply txs: null list")
	}
	for i, tx := range m.Txs {
		if len(tx) == 0 {
			return fmt.Errorf("reply txs: tx %d is empty", i)
		}
	}
	return nil
}

var (
	_ protocol.Validator = (*MsgReplyTxIds)(nil)
	_ protocol.Validator = (*MsgRequestTxs)(nil)
	_ protocol.Validator = (*MsgReplyTxs)(nil)
)
