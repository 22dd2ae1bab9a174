package fetch

import (
	"context"
	"errors"
	"fmt"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// message2 is r in /leios/fetch/2: a body is a txs request with an empty
// bitmap, as the CIP has it.
func message2(r *Request) (protocol.Message, error) {
	switch r.Kind {
	case RequestBody:
		return &MsgTxsRequest2{EbHash: r.Point.Hash}, nil
	case RequestTxs:
		bm, err := txBitmapOf(r.Offsets)
		if err != nil {
			return nil, err
		}
		return &MsgTxsRequest2{EbHash: r.Point.Hash, Bitmap: bm}, nil
	case RequestBlocks:
		hashes := make([]block.Hash, len(r.Blocks))
		for i, b := range r.Blocks {
			hashes[i] = b.Point.Hash
		}
		return &MsgMultiBlockRequest{EbHashes: hashes}, nil
	}
	return nil, errors.New("a request of no kind")
}

// checkTxs2 checks a /leios/fetch/2 txs reply: the wrapped body of a body
// request, or the txs of a txs request.
func (c *Client) checkTxs2(r *Request, m *MsgTxs2) (Reply, error) {
	switch r.Kind {
	case RequestBody:
		if len(m.Txs) != 1 {
			return Reply{}, fmt.Errorf("%w: %s: %w", ErrBadBody, r.Point, errNotOneBody)
		}
		body := &MsgBlock{Body: m.Txs[0]}
		if err := body.Validate(); err != nil {
			return Reply{}, fmt.Errorf("%w: %s: %w", ErrBadBody, r.Point, err)
		}
		eb, err := c.checkBody(r, body)
		return Reply{Body: eb}, err
	case RequestTxs:
		if len(m.Txs) != len(r.Offsets) {
			return Reply{}, fmt.Errorf("%w: %s: %d txs for %d asked", ErrBadTxs, r.Point, len(m.Txs), len(r.Offsets))
		}
		txs, err := hashedAs(r.Point, r.TxHashes, r.Offsets, m.Txs)
		return Reply{Txs: txs}, err
	}
	return Reply{}, fmt.Errorf("%w: txs in answer to a multi-block request", ErrBadTxs)
}

// recvBlocks reads the rest of a multi-block reply, which began with
// first, and checks each EB against the request, in its order: the body
// has the announced size, hashes to the EB hash and is a valid EB body, and
// its txs hash to what it names. Fewer or more EBs than asked for is a
// violation: a server that lacks one closes the stream instead.
func (c *Client) recvBlocks(ctx context.Context, r *Request, first protocol.Message) ([]BlockReply, error) {
	if r.Kind != RequestBlocks {
		return nil, fmt.Errorf("%w: EBs whole in answer to a request for %s", ErrBadBody, r.Point)
	}
	out := make([]BlockReply, 0, len(r.Blocks))
	for msg := first; ; {
		m, ok := msg.(*MsgMultiBlock)
		if !ok { // no more blocks: the engine allows nothing else here
			if len(out) != len(r.Blocks) {
				return nil, fmt.Errorf("%w: %d EBs of the %d asked for", ErrBadBody, len(out), len(r.Blocks))
			}
			return out, nil
		}
		if len(out) == len(r.Blocks) {
			return nil, fmt.Errorf("%w: more EBs than the %d asked for", ErrBadBody, len(r.Blocks))
		}
		ref := r.Blocks[len(out)]
		eb, err := c.checkBody(&Request{Kind: RequestBody, Point: ref.Point, EbSize: ref.EbSize}, &MsgBlock{Body: m.Body})
		if err != nil {
			return nil, err
		}
		if len(m.Txs) != len(eb.Txs) {
			return nil, fmt.Errorf("%w: %s: %d txs, the body names %d", ErrBadTxs, ref.Point, len(m.Txs), len(eb.Txs))
		}
		hashes := make([]block.Hash, len(eb.Txs))
		for i, tx := range eb.Txs {
			hashes[i] = tx.TxHash
		}
		txs, err := hashedAs(ref.Point, hashes, nil, m.Txs)
		if err != nil {
			return nil, err
		}
		out = append(out, BlockReply{Point: ref.Point, Body: eb, Txs: txs})
		if msg, err = c.s.Recv(ctx); err != nil {
			return nil, err
		}
	}
}

// hashedAs hashes txs and checks each against want (at offsets, for the
// error; nil: in EB order).
func hashedAs(p block.Point, want []block.Hash, offsets []int, txs [][]byte) ([]block.HashedTx, error) {
	out := make([]block.HashedTx, len(txs))
	for i, tx := range txs {
		if out[i] = block.HashTx(tx); out[i].Hash != want[i] {
			off := i
			if offsets != nil {
				off = offsets[i]
			}
			return nil, fmt.Errorf("%w: %s: tx at offset %d has the wrong hash", ErrBadTxs, p, off)
		}
	}
	return out, nil
}
