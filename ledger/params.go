package ledger

// Params are the protocol parameters the rules read. They come from the
// genesis file, hence the JSON tags (Cardano's spelling).
type Params struct {
	// MinFeeA is the fee per byte of serialized tx. Default 44.
	MinFeeA uint64 `json:"minFeeA"`
	// MinFeeB is the constant part of the minimum fee. Default 155381.
	MinFeeB uint64 `json:"minFeeB"`
	// CoinsPerUTxOByte prices an output: each output carries at least
	// CoinsPerUTxOByte · (160 + its size). Default 4310.
	CoinsPerUTxOByte uint64 `json:"coinsPerUTxOByte"`
	// MaxTxSize bounds a serialized tx in bytes. Default 16384.
	MaxTxSize uint64 `json:"maxTxSize"`
	// NetworkID every output address must carry. Default 0 (devnets).
	NetworkID byte `json:"networkId"`
}

// DefaultParams are the mainnet-like values on network 0 (docs/protocol.md, "Wire formats").
func DefaultParams() Params {
	return Params{MinFeeA: 44, MinFeeB: 155381, CoinsPerUTxOByte: 4310, MaxTxSize: 16384, NetworkID: 0}
}

// MinFee is the minimum fee of a tx of size bytes: a·size + b.
func (p Params) MinFee(size int) uint64 { return p.MinFeeA*uint64(size) + p.MinFeeB }

// utxoEntryOverhead is the Babbage constant added to an output's size: the
// bytes a UTxO entry costs beyond its serialized output.
const utxoEntryOverhead = 160

// MinOutputCoin is the minimum coin of an output whose encoding is size
// bytes: coinsPerUTxOByte · (160 + size).
func (p Params) MinOutputCoin(size int) uint64 {
	return p.CoinsPerUTxOByte * (utxoEntryOverhead + uint64(size))
}
