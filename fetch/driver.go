package fetch

import (
	"errors"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/leiosdb"
)

// The steps of the fetch state machine. Run and RunPeer drive them over
// real sessions; a scripted test drives them one at a time, playing the
// peers itself (Plan instead of Run, Deliver and Abandon instead of a
// client's replies).

// PeerUp counts a live fetch client of id: requests may go to it.
func (f *Fetcher) PeerUp(id peer.ID) { f.peerUp(id, false) }

// PeerUpMultiBlock is PeerUp for a client that speaks /leios/fetch/2:
// multi-block requests may go to it too.
func (f *Fetcher) PeerUpMultiBlock(id peer.ID) { f.peerUp(id, true) }

func (f *Fetcher) peerUp(id peer.ID, multiBlock bool) {
	f.mu.Lock()
	f.dec.peerUp(id, multiBlock)
	f.mu.Unlock()
	f.poke()
}

// PeerDown ends a fetch client of id; with its last, the peer's offers
// and budget are released and its requests re-planned.
func (f *Fetcher) PeerDown(id peer.ID) {
	f.mu.Lock()
	f.dec.peerDown(id)
	f.mu.Unlock()
	f.poke()
}

// Plan runs the decision logic once at Options.Now and returns the
// requests it issued, without handing them to any client: for a driver
// that carries them out itself. Each must end in Deliver or Abandon.
// nextHedge is when a hedge falls due (zero if none): plan again then.
func (f *Fetcher) Plan() (reqs []*Request, nextHedge time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dec.plan(f.opts.Now())
}

// Deliver hands the reply to r, already checked against it (Client.Next),
// to Options.Ingest and ends r. An error means the reply could not be
// stored for a reason of this node's; the request is then re-planned.
func (f *Fetcher) Deliver(r *Request, reply Reply) error {
	err := f.ingest(r, reply)
	if err == nil {
		// Counted before r ends: no request in flight means all counted.
		switch r.Kind {
		case RequestBody:
			f.fetched.Add(r.Bytes)
			f.bodiesByPoint.Add(1)
		case RequestBlocks:
			f.fetched.Add(wholeBytes(reply.Blocks)) // r.Bytes counts the bodies alone
			f.blocksWhole.Add(uint64(len(reply.Blocks)))
		default:
			f.fetched.Add(r.Bytes)
		}
	}
	f.mu.Lock()
	f.dec.complete(r.ID, err == nil)
	f.mu.Unlock()
	f.poke()
	return err
}

// Abandon ends r without a reply: the peer failed it, and the peer is
// not asked for that item again.
func (f *Fetcher) Abandon(r *Request) {
	f.mu.Lock()
	f.dec.complete(r.ID, false)
	f.mu.Unlock()
	f.poke()
}

// ingest hands a checked reply to the handlers. An EB of a multi-block
// reply goes in as a body and then its whole closure.
func (f *Fetcher) ingest(r *Request, reply Reply) error {
	switch r.Kind {
	case RequestBlocks:
		for _, b := range reply.Blocks {
			if stored, err := f.ingestBody(r.Peer, b.Point, b.Body); err != nil || !stored {
				if err != nil {
					return err
				}
				continue
			}
			if err := f.opts.Ingest.Txs(b.Point, b.Txs); err != nil && !errors.Is(err, leiosdb.ErrUnknownPoint) {
				return err
			}
		}
		return nil
	case RequestBody:
		_, err := f.ingestBody(r.Peer, r.Point, reply.Body)
		return err
	case RequestTxs:
		return f.opts.Ingest.Txs(r.Point, reply.Txs)
	}
	return nil
}

// ingestBody hands a checked body of p to the handlers; stored is false
// when there is nothing to keep (p was pruned, or the EB is invalid).
func (f *Fetcher) ingestBody(from peer.ID, p block.Point, body *block.EBBody) (stored bool, err error) {
	err = f.opts.Ingest.Body(p, body)
	switch {
	case errors.Is(err, leiosdb.ErrUnknownPoint):
		return false, nil // pruned while in flight: nothing to keep
	case errors.Is(err, leiosdb.ErrTxSizeMismatch):
		// The EB itself is invalid; the handler rejected its points.
		f.log.Warn("EB body declares a wrong tx size", "point", p, "peer", from, "err", err)
		return false, nil
	}
	return err == nil, err
}

// wholeBytes is what a multi-block reply carried: each body and its txs.
func wholeBytes(blocks []BlockReply) uint64 {
	var n uint64
	for _, b := range blocks {
		n += b.Body.Size()
		for _, tx := range b.Txs {
			n += uint64(len(tx.Bytes))
		}
	}
	return n
}
