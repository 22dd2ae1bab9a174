package api

import (
	"maps"
	"slices"
	"time"

	"github.com/leiosnode/leiosnode/admission"
	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/network/chainsync"
)

// Status reports the node's state, as GET /status serves it.
func (s *Server) Status() apitypes.Status {
	o := s.opts
	st := apitypes.Status{
		Slot:           o.Clock.SlotAt(time.Now()),
		SystemStart:    o.Clock.Start,
		SlotLengthMs:   o.Clock.SlotLength.Milliseconds(),
		Tip:            tipStatus(o.Chain.Tip()),
		ImmutableTip:   tipStatus(o.Chain.ImmutableTip()),
		Peers:          []apitypes.Peer{},
		BlocksAdopted:  o.BlocksAdopted(),
		Errors:         o.Errors(),
		PeerID:         o.Host.ID().String(),
		Producer:       o.Forger != nil,
		TxsOnChain:     o.TxsOnChain(),
		CertRBsOnChain: o.CertRBsOnChain(),
	}
	snapshot := o.Mempool.Snapshot()
	st.Mempool = apitypes.MempoolStatus{Txs: snapshot.Len(), Bytes: snapshot.Bytes(), CapacityBytes: o.Mempool.CapacityBytes(), Awaited: o.Mempool.Stats().Awaited}
	ls := o.Leios.Stats()
	st.Leios = apitypes.LeiosStatus{
		EBsAnnounced:         ls.EBsAnnounced,
		BodiesHeld:           ls.BodiesHeld,
		ClosuresComplete:     ls.ClosuresComplete,
		EBsCertified:         ls.CertsApplied,
		MissingTxs:           ls.MissingTxs,
		RequestsInFlight:     ls.RequestsInFlight,
		FetchedBytes:         ls.FetchedBytes,
		EBsFetchedWhole:      ls.EBsFetchedWhole,
		BodiesFetchedByPoint: ls.BodiesFetchedByPoint,
		TxsFromMempool:       ls.TxsFromMempool,
		VotesCast:            ls.VotesCast,
		VotesReceived:        ls.VotesReceived,
		VotesInvalid:         ls.VotesInvalid,
		VotesVerified:        ls.VotesVerified,
		VotesRepeated:        ls.VotesRepeated,
		VotesShed:            ls.VotesShed,
		Equivocations:        ls.Equivocations,
	}
	if refill := o.Leios.Refill(); refill.Missing > 0 {
		st.Leios.CertifiedClosuresMissing, st.Leios.MissingSince = refill.Missing, &refill.Since
	}
	if ls.VotesRelayed > 0 {
		st.Leios.VerificationsPerVote = float64(ls.VotesVerified) / float64(ls.VotesRelayed)
	}
	if o.Forger != nil {
		st.BlocksForged = o.Forger.Forged()
		st.Leios.EBsForged = o.Forger.EBs()
		st.Leios.CertificatesBuilt = o.Forger.Certificates()
		st.Leios.EBShare = o.Forger.EBShare()
	}
	if d, ok := cpuwork.ProcessTime(); ok {
		st.ProcessCPUSeconds = d.Seconds()
	}
	if o.CPU != nil {
		st.CPUSeconds = o.CPU.Seconds()
	}
	st.WriteStalls = map[string]apitypes.WriteStallStatus{}
	for name, stalls := range map[string]func() (uint64, time.Duration){"chaindb": o.Chain.WriteStalls, "leiosdb": o.Leios.DB().WriteStalls} {
		n, d := stalls()
		st.WriteStalls[name] = apitypes.WriteStallStatus{Count: n, Seconds: d.Seconds()}
	}
	for _, p := range o.Host.Peers() {
		st.Peers = append(st.Peers, apitypes.Peer{ID: p.ID.String(), Addr: p.Addr, Direction: p.Direction, Since: p.Since.UTC().Truncate(time.Second), Leios: p.Leios})
	}
	st.Forks = forksStatus(o.Forks())
	if o.Admission != nil {
		as := o.Admission.Stats()
		local, peers := as.Decisions[admission.Local.String()], as.Decisions[admission.Peers.String()]
		st.Admission = &apitypes.AdmissionStatus{
			Admitting: local.Admits(), PeersAdmitting: peers.Admits(),
			Refused: as.Refused[admission.Local.String()], PeerPauses: as.Refused[admission.Peers.String()],
			PeersPausedSeconds: as.Paused.Seconds(),
		}
		if !local.Admits() {
			st.Admission.Reason, st.Admission.Detail = local.Reason.String(), local.Detail
		}
	}
	for number := st.Tip.BlockNumber; number > 0 && len(st.RecentBlocks) < apitypes.RecentBlockCount; number-- {
		blk, err := o.Chain.BlockByNumber(number)
		if err != nil {
			break // the selection moved under us; a shorter list is still true
		}
		st.RecentBlocks = append(st.RecentBlocks, tipStatus(block.Tip{Point: blk.Point(), BlockNumber: number}))
	}
	return st
}

func tipStatus(t block.Tip) apitypes.TipStatus {
	return apitypes.TipStatus{BlockNumber: t.BlockNumber, Slot: t.Point.Slot, Hash: t.Point.Hash.String()}
}

// forksStatus is chain sync's fork status as /status shows it, its peers
// sorted by ID.
func forksStatus(f chainsync.ForkStatus) apitypes.ForksStatus {
	st := apitypes.ForksStatus{DeepForks: f.DeepForks, Stranded: f.Stranded, Peers: []apitypes.ForkedPeer{}}
	for _, id := range slices.Sorted(maps.Keys(f.Forked)) {
		st.Peers = append(st.Peers, apitypes.ForkedPeer{ID: id.String(), Tip: tipStatus(f.Forked[id])})
	}
	return st
}
