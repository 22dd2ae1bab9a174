package load

import (
	"cmp"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/keys"
)

// Key is a payment signing key the firehose spends from, named after its
// file (payment-3 for payment-3.skey).
type Key struct {
	Name string
	Key  ed25519.PrivateKey
}

// ReadKeys reads payment signing key files, in the order given. A file
// that is not a payment signing key is an error naming it.
func ReadKeys(paths []string) ([]Key, error) {
	var read []Key
	for _, path := range paths {
		key, err := keys.ReadSigningKey(path, keys.Payment)
		if err != nil {
			return nil, err
		}
		read = append(read, Key{Name: strings.TrimSuffix(filepath.Base(path), ".skey"), Key: key})
	}
	return read, nil
}

// FundsKeys reads every payment key in a devnet's funds directory
// (payment-i.skey, as layout.Write names them), in the order of i.
func FundsKeys(fundsDir string) ([]Key, error) {
	paths, err := filepath.Glob(filepath.Join(fundsDir, "payment-*.skey"))
	if err != nil {
		return nil, err
	}
	index := func(path string) int {
		i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "payment-"), ".skey"))
		if err != nil {
			return -1 // not one of Write's names: sorts first
		}
		return i
	}
	slices.SortFunc(paths, func(a, b string) int { return cmp.Compare(index(a), index(b)) })
	return ReadKeys(paths)
}

// FundedKey is a payment key of a funds directory and what genesis gives
// its address.
type FundedKey struct {
	Name    string // payment-i
	Key     ed25519.PrivateKey
	Address []byte
	Coin    uint64
}

// FundedKeys reads every payment key in fundsDir (FundsKeys) with what g
// gives its address, for a tool that forges from the genesis funds
// without a node to ask. A key whose address genesis does not fund is an
// error: txs from it would only collect rejections.
func FundedKeys(fundsDir string, g *consensus.Genesis) ([]FundedKey, error) {
	read, err := FundsKeys(fundsDir)
	if err != nil {
		return nil, err
	}
	var funded []FundedKey
	for _, k := range read {
		address, err := keys.EnterpriseAddress(k.Key.Public().(ed25519.PublicKey), g.NetworkID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.Name, err)
		}
		coin, ok := g.InitialFunds[hex.EncodeToString(address)] // layout.Write spells it so
		if !ok {
			return nil, fmt.Errorf("%s: its address is not funded in genesis", k.Name)
		}
		funded = append(funded, FundedKey{Name: k.Name, Key: k.Key, Address: address, Coin: coin})
	}
	return funded, nil
}
