package apitypes

import "encoding/json"

// Parameters is GET /api/parameters: the protocol parameters the node's
// ledger applies, at the top level under the genesis' protocolParams
// field names, for wallets that build txs (the fee's terms, the price of
// an output, the largest tx, the network id every address must carry);
// and the network's timing and Leios limits, for tools that derive from
// the network itself what its chain can carry (the load tool's capacity
// model). The latter are absent from a node not given them.
type Parameters struct {
	ProtocolParams
	// SlotLengthMs is the slot's length, ActiveSlotsCoeff f as the genesis
	// writes it (decimal text), Leios the genesis' Leios parameters.
	SlotLengthMs     int64        `json:"slotLengthMs,omitempty"`
	ActiveSlotsCoeff json.Number  `json:"activeSlotsCoeff,omitempty"`
	Leios            *LeiosParams `json:"leios,omitempty"`
}

// ProtocolParams are the ledger's protocol parameters, as the genesis'
// protocolParams writes them (the ledger's Params; the server's tests
// hold the two to the same fields).
type ProtocolParams struct {
	MinFeeA          uint64 `json:"minFeeA"`          // fee per byte of tx
	MinFeeB          uint64 `json:"minFeeB"`          // the fee's constant part
	CoinsPerUTxOByte uint64 `json:"coinsPerUTxOByte"` // an output's price per byte, over 160 + its size
	MaxTxSize        uint64 `json:"maxTxSize"`        // bytes
	NetworkID        byte   `json:"networkId"`        // every output address carries it
}

// LeiosParams are the genesis' Leios parameters, as its leios field writes
// them (consensus' LeiosParams; the server's tests hold the two to the
// same fields): the block and EB limits in bytes and txs, the protocol's
// periods in slots, the committee's and the quorum's shares of the stake
// as decimal text, and the network's encoding ("cip" or "prototype").
type LeiosParams struct {
	RBMaxBodyBytes         int         `json:"rbMaxBodyBytes"`
	EBMaxBodyBytes         int         `json:"ebMaxBodyBytes"`
	EBMaxClosureBytes      int         `json:"ebMaxClosureBytes"`
	EBMaxTxs               int         `json:"ebMaxTxs"`
	LHdr                   int         `json:"lHdr"`
	LVote                  int         `json:"lVote"`
	LDiff                  int         `json:"lDiff"`
	MinCertGap             int         `json:"minCertGap"`
	CommitteeStakeFraction json.Number `json:"committeeStakeFraction"`
	QuorumStakeFraction    json.Number `json:"quorumStakeFraction"`
	Encoding               string      `json:"encoding"`
}
