package api

import "net/http"

// handleParameters is GET /api/parameters: the protocol parameters the
// node's ledger applies (the genesis' protocolParams, under its field
// names), for wallets that build txs: the fee's terms, the price of an
// output, the largest tx and the network id every address must carry.
func (s *Server) handleParameters(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.opts.Params)
}
