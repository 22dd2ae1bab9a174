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
	"github.com/leiosnode/leiosnode/keys/peerid"
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
	id, err := peerid.Of(in.nodeKey.Public().(ed25519.PublicKey))
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
// (LeiosFetch) or a vote (LeiosNotify, or the CIP's votes stream) sent to
// or received from id. EBs and votes are named as the forge names them
// (simtrace's ids), by the RB that announced the EB, which the pipeline
// knows; one whose announcement this node has not seen, or no longer
// remembers, is not written, having no name.
func (n *Node) traceMessage(id peer.ID, dir protocol.Direction, m protocol.Message, size int) {
	switch m := m.(type) {
	case *blockfetch.MsgBlock:
		n.traceItem(id, dir, "RB", m.Block.Hash().String(), m.Block.Header.Slot, size)
	case *fetch.MsgBlock:
		n.traceEB(id, dir, m.Body, size)
	case *fetch.MsgMultiBlock: // LeiosFetch v2: an EB with its txs
		n.traceEB(id, dir, m.Body, size)
	case *fetch.MsgTxs2:
		// LeiosFetch v2 answers a body request with the body as its one
		// item: a CBOR map, bare or (the CIP's encoding) in an array of
		// one, where a tx is an array of four.
		if len(m.Txs) == 1 && isEBBody(m.Txs[0]) {
			n.traceEB(id, dir, m.Txs[0], size)
		}
	case *notify.MsgVotes:
		for _, v := range m.Votes {
			if slot, ok := n.leios.AnnouncedAt(v.RbHash); ok {
				n.traceItem(id, dir, "VTBundle", forge.VoteID(v), slot, size/len(m.Votes))
			}
		}
	case *notify.MsgLeiosVote: // the CIP's: the EB by its slot and hash
		v := m.Vote
		if rb, ok := n.leios.AnnouncerAt(block.Point{Slot: v.Slot, Hash: v.EbHash}); ok {
			n.traceItem(id, dir, "VTBundle", forge.VoteID(block.Vote{RbHash: rb, VoterSeat: v.VoterID}), v.Slot, size)
		}
	}
}

// isEBBody reports whether item begins as an EB body does in either
// encoding: a map, or an array of one map.
func isEBBody(item []byte) bool {
	if len(item) > 1 && item[0] == 0x81 {
		item = item[1:]
	}
	return len(item) > 0 && item[0]>>5 == cborMap
}

// traceEB writes an EB body sent or received, named by its announcer.
func (n *Node) traceEB(id peer.ID, dir protocol.Direction, body []byte, size int) {
	if rb, ok := n.leios.AnnouncerOf(block.HashBytes(body)); ok {
		n.traceItem(id, dir, "EB", rb.Hash.String(), rb.Slot, size)
	}
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
// ends. Every slot has one, in order: a wake-up late by a slot or more
// (the process descheduled, a GC) writes each slot it passed, since the
// trace verifier counts Slot events to know the current slot.
func (n *Node) traceSlots(ctx context.Context) error {
	clock := n.validator.Clock()
	next := clock.SlotAt(n.now()) + 1
	for {
		timer := time.NewTimer(clock.SlotStart(next).Sub(n.now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		for now := clock.SlotAt(n.now()); next <= now; next++ {
			n.trace.Emit(simtrace.Slot{Node: n.trace.Node(), Slot: next})
		}
	}
}
