package api

import (
	"net/http"

	"github.com/leiosnode/leiosnode/apitypes"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// handleParameters is GET /api/parameters (apitypes.Parameters).
func (s *Server) handleParameters(w http.ResponseWriter, _ *http.Request) {
	p := apitypes.Parameters{ProtocolParams: protocolParams(s.opts.Params)}
	if s.opts.ActiveSlotsCoeff != "" {
		leios := leiosParams(s.opts.LeiosParams)
		p.SlotLengthMs, p.ActiveSlotsCoeff, p.Leios = s.opts.Clock.SlotLength.Milliseconds(), s.opts.ActiveSlotsCoeff, &leios
	}
	writeJSON(w, http.StatusOK, p)
}

// protocolParams are the ledger's parameters as the API writes them: the
// same fields (TestParametersMirrorTheNodes holds them so).
func protocolParams(p ledger.Params) apitypes.ProtocolParams {
	return apitypes.ProtocolParams{
		MinFeeA: p.MinFeeA, MinFeeB: p.MinFeeB, CoinsPerUTxOByte: p.CoinsPerUTxOByte,
		MaxTxSize: p.MaxTxSize, NetworkID: p.NetworkID,
	}
}

// leiosParams are the genesis' Leios parameters as the API writes them:
// the same fields (TestParametersMirrorTheNodes holds them so).
func leiosParams(p consensus.LeiosParams) apitypes.LeiosParams {
	return apitypes.LeiosParams{
		RBMaxBodyBytes: p.RBMaxBodyBytes, EBMaxBodyBytes: p.EBMaxBodyBytes, EBMaxClosureBytes: p.EBMaxClosureBytes,
		EBMaxTxs: p.EBMaxTxs, LHdr: p.LHdr, LVote: p.LVote, LDiff: p.LDiff, MinCertGap: p.MinCertGap,
		CommitteeStakeFraction: p.CommitteeStakeFraction, QuorumStakeFraction: p.QuorumStakeFraction,
		Encoding: p.Encoding.String(),
	}
}
