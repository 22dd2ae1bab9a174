package notify

import (
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/network/protocol"
)

// How a client of the CIP's streams grants tokens: GrantSize at a time,
// GrantsAhead of them outstanding — the CIP's suggestion of 1000 up front
// and 100 more after each 100 received. The server never waits for a grant
// while the client keeps up.
const (
	GrantSize   = 100
	GrantsAhead = 10
)

// Size limits of the CIP's streams: a request is a few bytes; an
// announcement a header (under a kilobyte, bounded as the prototype's
// notification); a vote about 100 bytes; an offer about 50.
const (
	maxVoteSize  = 256
	maxOfferSize = 128
)

// AnnounceSpec declares LeiosAnnounce (/leios/announce/1): the RB headers
// that announce EBs, as a request-N stream.
func AnnounceSpec() *protocol.Spec {
	return tokenStreamSpec("announce", maxNotificationSize, TagLeiosAnnounceDone, map[uint64]func() protocol.Message{
		TagBlockAnnouncement: func() protocol.Message { return new(MsgBlockAnnouncement) },
		TagLeiosAnnounceDone: func() protocol.Message { return new(MsgLeiosDone) },
	})
}

// VotesSpec declares LeiosVotes (/leios/votes/1): one vote per message,
// as a request-N stream.
func VotesSpec() *protocol.Spec {
	return tokenStreamSpec("votes", maxVoteSize, TagLeiosVotesDone, map[uint64]func() protocol.Message{
		TagLeiosVote:      func() protocol.Message { return new(MsgLeiosVote) },
		TagLeiosVotesDone: func() protocol.Message { return new(MsgLeiosDone) },
	})
}

// BlockNotifySpec declares LeiosBlockNotify (/leios/blocknotify/1): the
// offers of EB bodies and closures, as a request-N stream.
func BlockNotifySpec() *protocol.Spec {
	return tokenStreamSpec("blocknotify", maxOfferSize, TagLeiosBlockNotifyDone, map[uint64]func() protocol.Message{
		TagLeiosBlockOffer:      func() protocol.Message { return new(MsgLeiosBlockOffer) },
		TagLeiosBlockTxsOffer:   func() protocol.Message { return new(MsgLeiosBlockTxsOffer) },
		TagLeiosBlockNotifyDone: func() protocol.Message { return new(MsgLeiosBlockNotifyDone) },
	})
}

// tokenStreamSpec is the state machine all three share (the CIP's figure
// 6): Idle (client) --request next(N)--> Busy (server, N tokens) --each
// notification spends one, the last back to Idle; done from Idle. messages
// are the stream's own, done included; the request is added. Timeouts as
// LeiosNotify's (Spec): the server holds its tokens until it has news, and
// a client that hears nothing for Options.KeepAlive opens the stream anew.
func tokenStreamSpec(name string, maxNotification int, doneTag uint64, messages map[uint64]func() protocol.Message) *protocol.Spec {
	busy := map[uint64]protocol.State{}
	for tag := range messages {
		if tag != doneTag {
			busy[tag] = StIdle
		}
	}
	messages[TagLeiosRequestNext] = func() protocol.Message { return new(MsgLeiosRequestNext) }
	return &protocol.Spec{
		Work:    cpuwork.Notify,
		Name:    name,
		Initial: StIdle,
		States: map[protocol.State]protocol.StateSpec{
			StIdle: {
				Agency:  protocol.Client,
				Next:    map[uint64]protocol.State{TagLeiosRequestNext: StBusy, doneTag: StDone},
				MaxSize: maxRequestSize,
				Timeout: protocol.IdleWait,
			},
			StBusy: {
				Agency:  protocol.Server,
				Next:    busy,
				MaxSize: maxNotification,
				Timeout: protocol.HeldWait,
				Tokens:  true,
			},
			StDone: {Agency: protocol.Nobody},
		},
		Messages:     messages,
		MaxPipelined: GrantsAhead - 1,
		ForbidTags:   true, // as the prototype's streams
		// As the CIP's CDDL: integers and lengths in their shortest form.
		MinimalEncoding: true,
	}
}
