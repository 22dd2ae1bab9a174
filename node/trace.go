package node

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/fetch"
	"github.com/leiosnode/leiosnode/forge"
	"github.com/leiosnode/leiosnode/internal/simtrace"
	"github.com/leiosnode/leiosnode/keys"
	"github.com/leiosnode/leiosnode/network/blockfetch"
	"github.com/leiosnode/leiosnode/network/protocol"
	"github.com/leiosnode/leiosnode/notify"
)

// The node's events in the Leios simulators' trace format (package
// simtrace), when the config's traceFile or Options.TraceFile names a
// file: what the forge generates (it writes those itself), the blocks, EBs
// and votes sent to and received from each peer (from the host's
// messages), each slot the clock enters, and the time a peer's block took
// to validate and apply. docs/operations.md maps them to the format.

// openTrace creates the trace file path names, if any; the node's name in
// it is its peer ID.
func (n *Node) openTrace(path string, in *inputs) error {
	if path == "" {
		return nil
	}
	id, err := keys.PeerID(in.nodeKey.Public().(ed25519.PublicKey))
	if err != nil {
		return err
	}
	if n.trace, err = simtrace.Create(path, id.String(), n.genesis.SystemStart, n.now); err != nil {
		return fmt.Errorf("config %s: traceFile %s: %w", n.cfg.Path, path, err)
	}
	return nil
}

// cborMap is CBOR's major type of a map, in a data item's first byte's
// top three bits.
const cborMap = 5

// hostMessages is the host's OnMessage: traceMessage with a trace, nil
// without.
func (n *Node) hostMessages() func(peer.ID, protocol.Direction, protocol.Message, int) {
	if n.trace == nil {
		return nil
	}
	return n.traceMessage
}

// traceMessage is the host's OnMessage: an RB (block fetch), an EB body
// (LeiosFetch) or a vote (LeiosNotify) sent to or received from id.
func (n *Node) traceMessage(id peer.ID, dir protocol.Direction, m protocol.Message, size int) {
	var kind, itemID string
	var slot uint64
	switch m := m.(type) {
	case *blockfetch.MsgBlock:
		kind, itemID, slot = "RB", m.Block.Hash().String(), m.Block.Header.Slot
	case *fetch.MsgBlock:
		kind, itemID = "EB", block.HashBytes(m.Body).String()
	case *fetch.MsgMultiBlock: // LeiosFetch v2: an EB with its txs
		kind, itemID = "EB", block.HashBytes(m.Body).String()
	case *fetch.MsgTxs2:
		// LeiosFetch v2 answers a body request with the body as its one
		// item: a CBOR map, where a tx is an array.
		if len(m.Txs) != 1 || len(m.Txs[0]) == 0 || m.Txs[0][0]>>5 != cborMap {
			return
		}
		kind, itemID = "EB", block.HashBytes(m.Txs[0]).String()
	case *notify.MsgVotes:
		for _, v := range m.Votes {
			n.traceItem(id, dir, "VTBundle", forge.VoteID(v), 0, size/len(m.Votes))
		}
		return
	default:
		return
	}
	n.traceItem(id, dir, kind, itemID, slot, size)
}

func (n *Node) traceItem(id peer.ID, dir protocol.Direction, kind, itemID string, slot uint64, size int) {
	t := n.trace
	if dir == protocol.Sent {
		t.Emit(simtrace.Sent{Kind: kind, Sender: t.Node(), Recipient: id.String(), MsgSizeBytes: size, ID: itemID, Slot: slot})
		return
	}
	t.Emit(simtrace.Received{Kind: kind, Sender: id.String(), Recipient: t.Node(), ID: itemID, Slot: slot})
}

// traceApplied writes the time a peer's block took to validate and apply.
func (n *Node) traceApplied(blk *block.Block, took time.Duration) {
	n.trace.Emit(simtrace.CPU{Node: n.trace.Node(), CPUTimeS: took.Seconds(), TaskType: "ValRB", ID: blk.Hash().String()})
}

// traceSlots writes a Slot event as the clock enters each slot, until ctx
// ends.
func (n *Node) traceSlots(ctx context.Context) error {
	clock := n.validator.Clock()
	for {
		slot := clock.SlotAt(n.now()) + 1
		timer := time.NewTimer(clock.SlotStart(slot).Sub(n.now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		n.trace.Emit(simtrace.Slot{Node: n.trace.Node(), Slot: slot})
	}
}
