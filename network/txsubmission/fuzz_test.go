package txsubmission_test

import (
	"bytes"
	"testing"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/network/protocol/protocoltest"
	"github.com/leiosnode/leiosnode/network/txsubmission"
)

// FuzzDecode: any bytes decode to a tx-submission message or fail with
// ErrMalformed, and a decoded message re-encodes to bytes that decode to
// the same encoding again.
func FuzzDecode(f *testing.F) {
	spec := txsubmission.Spec()
	w := newWallet(1)
	var txs []block.Hash
	var raw [][]byte
	var ids []txsubmission.TxIDAndSize
	for _, tx := range w.txs(f, 0, 2) {
		txs = append(txs, tx.Hash())
		raw = append(raw, tx.Bytes())
		ids = append(ids, txsubmission.TxIDAndSize{ID: tx.Hash(), Size: uint32(tx.Size())})
	}
	for _, m := range []protocol.Message{
		&txsubmission.MsgInit{},
		&txsubmission.MsgRequestTxIds{Blocking: true, Ack: 0, Req: 100},
		&txsubmission.MsgRequestTxIds{Blocking: false, Ack: 65535, Req: 3},
		&txsubmission.MsgReplyTxIds{IDs: ids},
		&txsubmission.MsgReplyTxIds{IDs: []txsubmission.TxIDAndSize{}},
		&txsubmission.MsgRequestTxs{IDs: txs},
		&txsubmission.MsgReplyTxs{Txs: raw},
		&txsubmission.MsgReplyTxs{Txs: [][]byte{}},
		&txsubmission.MsgDone{},
	} {
		data, err := protocol.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0x82, 0x01, 0xf6})                         // reply tx ids with a null list
	f.Add([]byte{0x82, 0x03, 0x81, 0x40})                   // reply txs with an empty tx
	f.Add([]byte{0x84, 0x00, 0xf5, 0x00, 0x1a, 0, 1, 0, 0}) // req over uint16
	f.Add([]byte{0x82, 0x01, 0x81, 0x82, 0x41, 0x00, 0x01}) // a short tx hash
	f.Add([]byte{0x81, 0x05})                               // no such tag
	f.Fuzz(func(t *testing.T, data []byte) {
		protocoltest.DecodeStable(t, spec, data)
	})
}

// TestWireEncoding pins the encodings to the TxSubmission2 CDDL.
func TestWireEncoding(t *testing.T) {
	id := block.Hash{0xab}
	hashItem := append([]byte{0x58, 0x20}, id[:]...)
	for _, tc := range []struct {
		m    protocol.Message
		want []byte
	}{
		{&txsubmission.MsgInit{}, []byte{0x81, 0x06}},
		{&txsubmission.MsgRequestTxIds{Blocking: true, Ack: 2, Req: 100}, []byte{0x84, 0x00, 0xf5, 0x02, 0x18, 0x64}},
		{&txsubmission.MsgReplyTxIds{IDs: []txsubmission.TxIDAndSize{{ID: id, Size: 300}}},
			append(append([]byte{0x82, 0x01, 0x81, 0x82}, hashItem...), 0x19, 0x01, 0x2c)},
		{&txsubmission.MsgRequestTxs{IDs: []block.Hash{id}}, append([]byte{0x82, 0x02, 0x81}, hashItem...)},
		{&txsubmission.MsgReplyTxs{Txs: [][]byte{{0x84, 0xa0}}}, []byte{0x82, 0x03, 0x81, 0x42, 0x84, 0xa0}},
		{&txsubmission.MsgDone{}, []byte{0x81, 0x04}},
	} {
		got, err := protocol.Encode(tc.m)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%T: % x, want % x (%v)", tc.m, got, tc.want, err)
		}
	}
}
