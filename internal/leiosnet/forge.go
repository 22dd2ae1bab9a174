package leiosnet

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/leiosnode/leiosnode/block"
	"github.com/leiosnode/leiosnode/bls"
	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/vrf"
)

// TxSize is the size of a generated tx: a full 12 MB closure is the
// prototype's 13,888 txs.
const TxSize = 864

// EB is a forged endorser block: the RB header announcing it, its body and
// its closure (the txs, in body order).
type EB struct {
	Header  *block.Header
	Body    *block.EBBody
	Closure []block.HashedTx // each tx with the hash its body entry names
}

// Point is the EB's point: its RB's slot and its hash.
func (eb *EB) Point() block.Point { return block.Point{Slot: eb.Header.Slot, Hash: eb.Body.Hash()} }

// ClosureSize is the sum of its txs' sizes.
func (eb *EB) ClosureSize() uint64 { return eb.Body.ClosureSize() }

// pool is the one stake pool of the network: it leads every slot (f = 1).
type pool struct {
	issuer    ed25519.PrivateKey
	vrfKey    *vrf.SecretKey
	votingKey *bls.SecretKey
}

func newPool() (*pool, error) {
	issuer := ed25519.NewKeyFromSeed(seedBytes(0x01))
	vrfKey, err := vrf.NewKeyFromSeed(seedBytes(0x02))
	if err != nil {
		return nil, err
	}
	votingKey, err := bls.KeyFromSeed(seedBytes(0x04))
	if err != nil {
		return nil, err
	}
	return &pool{issuer: issuer, vrfKey: vrfKey, votingKey: votingKey}, nil
}

func seedBytes(tag byte) []byte {
	s := make([]byte, 32)
	s[0], s[31] = tag, 0x1e
	return s
}

// genesis is a network of the one pool, with slots of one second starting
// a day ago: every forged slot has begun, so no header is from the future.
func (p *pool) genesis(now time.Time) *consensus.Genesis {
	vrfPub := p.vrfKey.Public()
	g := &consensus.Genesis{
		SystemStart:      now.Add(-24 * time.Hour).Truncate(time.Second),
		SlotLengthMs:     1000,
		ActiveSlotsCoeff: "1",
		SecurityParam:    10,
		EpochNonce:       hex.EncodeToString(seedBytes(0x03)),
		MaxClockSkewMs:   1000,
		Pools: []consensus.Pool{{
			Name:       "leiosnet",
			IssuerVKey: hex.EncodeToString(p.issuer.Public().(ed25519.PublicKey)),
			VRFVKey:    hex.EncodeToString(vrfPub[:]),
			Stake:      1,
		}},
		Leios: consensus.DefaultLeiosParams(),
	}
	g.Pools[0].SetVotingKey(p.votingKey.PublicKey(), p.votingKey.ProvePossession())
	return g
}

// header is a valid RB header of slot announcing ann: real VRF proof for
// the slot, signed by the issuer.
func (p *pool) header(v *consensus.Validator, slot uint64, ann block.Announcement) *block.Header {
	proof, output := vrf.Prove(p.vrfKey, v.VRFInput(slot))
	var issuer, vrfPub block.Bytes32
	copy(issuer[:], p.issuer.Public().(ed25519.PublicKey))
	vrfPub = block.Bytes32(p.vrfKey.Public())
	return block.NewHeader(block.HeaderBody{
		BlockNumber:  slot,
		Slot:         slot,
		IssuerVKey:   issuer,
		VRFVKey:      vrfPub,
		VRF:          block.VRFResult{Output: output, Proof: proof},
		Announcement: &ann,
	}, p.issuer)
}

// GenerateTxs returns closureBytes/TxSize distinct txs of TxSize random
// bytes from rng (at least one).
func GenerateTxs(rng *rand.Rand, closureBytes int) [][]byte {
	n := max(1, closureBytes/TxSize)
	txs := make([][]byte, n)
	for i := range txs {
		tx := make([]byte, TxSize)
		for j := 0; j < TxSize; j += 8 {
			v := rng.Uint64()
			for k := range 8 {
				tx[j+k] = byte(v >> (8 * k))
			}
		}
		txs[i] = tx
	}
	return txs
}

// Forge builds an EB of txs, in that order, announced by a valid header at
// the network's next slot. It is not published yet (Publish, Diffuse).
func (n *Network) Forge(txs [][]byte) (*EB, error) {
	closure := block.HashTxs(txs)
	entries := make([]block.EBTx, len(closure))
	for i, tx := range closure {
		entries[i] = block.EBTx{TxHash: tx.Hash, Size: uint32(len(tx.Bytes))}
	}
	body, err := block.NewEBBody(entries, n.limits)
	if err != nil {
		return nil, fmt.Errorf("leiosnet: forge: %w", err)
	}
	n.mu.Lock()
	n.slot++
	slot := n.slot
	n.mu.Unlock()
	return &EB{Header: n.pool.header(n.validator, slot, body.Announcement()), Body: body, Closure: closure}, nil
}
