package api

import (
	"encoding/json"
	"net/http"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

// Parameters is GET /api/parameters: the protocol parameters the node's
// ledger applies, at the top level under the genesis' protocolParams
// field names, for wallets that build txs (the fee's terms, the price of
// an output, the largest tx, the network id every address must carry);
// and the network's timing and Leios limits, for tools that derive from
// the network itself what its chain can carry (the load tool's capacity
// model). The latter are absent from a node not given them.
type Parameters struct {
	ledger.Params
	// SlotLengthMs is the slot's length, ActiveSlotsCoeff f as the genesis
	// writes it (decimal text), Leios the genesis' Leios parameters.
	SlotLengthMs     int64                  `json:"slotLengthMs,omitempty"`
	ActiveSlotsCoeff json.Number            `json:"activeSlotsCoeff,omitempty"`
	Leios            *consensus.LeiosParams `json:"leios,omitempty"`
}

// handleParameters is GET /api/parameters (Parameters).
func (s *Server) handleParameters(w http.ResponseWriter, _ *http.Request) {
	p := Parameters{Params: s.opts.Params}
	if s.opts.ActiveSlotsCoeff != "" {
		leios := s.opts.LeiosParams
		p.SlotLengthMs, p.ActiveSlotsCoeff, p.Leios = s.opts.Clock.SlotLength.Milliseconds(), s.opts.ActiveSlotsCoeff, &leios
	}
	writeJSON(w, http.StatusOK, p)
}
