package notify

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// serveTokens answers one of the CIP's streams of a peer: from its own
// FIFO, which carries only kind, it sends while the client has granted
// tokens, each notification in the stream's shape (cipMessages), and waits
// for a grant when none is left. It returns when the peer sends done, the
// session ends, or the relay drops the stream (ErrSlowPeer).
func (r *Relay) serveTokens(ctx context.Context, s *protocol.Session, kind streamKind) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	q := r.register(ctx, stop, kind)
	defer r.unregister(q)
	tokens := 0
	var ready []protocol.Message // converted, not yet sent
	sent := cipVotesSent{keys: make(map[cipVoteKey]struct{})}
	for {
		if tokens == 0 {
			msg, err := s.Recv(ctx)
			if err != nil {
				return stopCause(ctx, s, err)
			}
			switch m := msg.(type) {
			case *MsgLeiosRequestNext:
				tokens = m.Grants()
			case *MsgLeiosDone, *MsgLeiosBlockNotifyDone:
				return nil
			default:
				return fmt.Errorf("notify: server got %T", msg) // the Spec rules it out
			}
			continue
		}
		for len(ready) == 0 {
			m, err := r.next(ctx, q)
			if err != nil {
				return stopCause(ctx, s, err)
			}
			ready = sent.unsent(r.cipMessages(m), r.floor())
		}
		if err := s.Send(ready[0]); err != nil {
			return err
		}
		ready[0] = nil
		ready, tokens = ready[1:], tokens-1
	}
}

// cipMessages are the CIP stream messages of a FIFO item: an announcement
// as it is; an offer with the height of the first header that announced
// its point; a vote batch as one message per vote, each naming the slot
// and EB its RB announced. What was pruned since it was queued is left
// out.
func (r *Relay) cipMessages(m protocol.Message) []protocol.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch m := m.(type) {
	case *MsgBlockAnnouncement:
		return []protocol.Message{m}
	case *MsgBlockOffer:
		if height, ok := r.heightLocked(m.Point); ok {
			return []protocol.Message{&MsgLeiosBlockOffer{Slot: m.Point.Slot, EbHash: m.Point.Hash, BlockHeight: height}}
		}
	case *MsgBlockTxsOffer:
		if height, ok := r.heightLocked(m.Point); ok {
			return []protocol.Message{&MsgLeiosBlockTxsOffer{Slot: m.Point.Slot, EbHash: m.Point.Hash, BlockHeight: height}}
		}
	case *MsgVotes:
		out := make([]protocol.Message, 0, len(m.Votes))
		for _, v := range m.Votes {
			h := r.headers[v.RbHash]
			if h == nil || h.Announcement == nil {
				continue
			}
			out = append(out, &MsgLeiosVote{Vote: LeiosVote{Slot: h.Slot, EbHash: h.Announcement.EbHash, VoterID: v.VoterSeat, Signature: v.Signature}})
		}
		return out
	}
	return nil
}

// cipVotesSent is what a served stream has sent of votes, by the CIP's name
// for a vote: (slot, EB, voter). Two RBs of one slot may announce the same
// EB (two leaders with the same mempool); the relay files a seat's vote on
// it under each RB it was cast or checked for, and under the CIP's vote
// message it is one vote, signed alike. It goes out once: the follower
// would take the second copy as the peer's repeat (ErrRepeatedVote).
type cipVotesSent struct {
	floor uint64 // the relay's floor when last pruned
	keys  map[cipVoteKey]struct{}
}

type cipVoteKey struct {
	slot   uint64
	ebHash block.Hash
	voter  uint16
}

// unsent drops from msgs the votes the stream has sent, and records the
// others as sent; what fell below floor is forgotten first.
func (s *cipVotesSent) unsent(msgs []protocol.Message, floor uint64) []protocol.Message {
	if floor > s.floor {
		s.floor = floor
		maps.DeleteFunc(s.keys, func(k cipVoteKey, _ struct{}) bool { return k.slot < floor })
	}
	return slices.DeleteFunc(msgs, func(m protocol.Message) bool {
		v, ok := m.(*MsgLeiosVote)
		if !ok {
			return false
		}
		k := cipVoteKey{v.Vote.Slot, v.Vote.EbHash, v.Vote.VoterID}
		if _, dup := s.keys[k]; dup {
			return true
		}
		s.keys[k] = struct{}{}
		return false
	})
}
