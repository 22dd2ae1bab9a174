package chaindb

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/leiosnode/leiosnode/ledger"
)

// The address index answers "which outputs does this address hold?" from
// the ledger at any volatile point, without a walk of the UTxO.
//
//   - Immutable part: every output of the backing store has an entry
//     a ‖ uvarint(len(address)) ‖ address ‖ TxIn.Key → coin, set and
//     deleted in the very batches that set and delete the output (flushDiff,
//     writeGenesis), so after any crash it holds exactly the backing
//     store's outputs. The length prefix keeps one address's entries apart
//     from those of a longer address that starts with it.
//   - Volatile part: each selected block after the immutable tip keeps,
//     beside its diff, the outputs its diff created by address
//     (node.created), built once when the block is applied; a rollback drops
//     them with the diff.
//
// A view lists an address's outputs as the index's entries under the
// address less those its diffs spend, plus the outputs its diffs created
// for the address and did not spend: one prefix scan and, per diff, a map
// read per output.

// AddressUTxO is an output paid to the address asked for.
type AddressUTxO struct {
	In   ledger.TxIn
	Coin uint64
}

// addressPrefixKey is the start of every index key of address; extra is
// room for what the caller appends.
func addressPrefixKey(address []byte, extra int) []byte {
	k := make([]byte, 0, 1+binary.MaxVarintLen64+len(address)+extra)
	k = binary.AppendUvarint(append(k, prefixAddress), uint64(len(address)))
	return append(k, address...)
}

func addressKey(address []byte, in ledger.TxIn) []byte {
	k := in.Key()
	return append(addressPrefixKey(address, len(k)), k[:]...)
}

// parseAddressKey is the inverse of addressKey.
func parseAddressKey(key []byte) (address []byte, in ledger.TxIn, err error) {
	if len(key) == 0 || key[0] != prefixAddress {
		return nil, in, fmt.Errorf("address index key %x: wrong prefix", key)
	}
	n, size := binary.Uvarint(key[1:])
	rest := key[1+max(size, 0):]
	if size <= 0 || uint64(len(rest)) != n+ledger.TxInKeySize {
		return nil, in, fmt.Errorf("address index key %x: malformed", key)
	}
	in, err = ledger.TxInFromKey(rest[n:])
	return rest[:n], in, err
}

func encodeCoin(coin uint64) []byte { return binary.BigEndian.AppendUint64(nil, coin) }

// indexOutput and unindexOutput add to b the index's part of storing and
// deleting the output out at in.
func indexOutput(b *pebble.Batch, in ledger.TxIn, out ledger.TxOut) {
	b.Set(addressKey(out.Address, in), encodeCoin(out.Coin), nil)
}

func unindexOutput(b *pebble.Batch, in ledger.TxIn, spent ledger.TxOut) {
	b.Delete(addressKey(spent.Address, in), nil)
}

// createdByAddress is the volatile index of a block: the outputs its diff
// created, by address.
func createdByAddress(d *ledger.Diff) map[string][]ledger.TxIn {
	m := make(map[string][]ledger.TxIn)
	for in, out := range d.Inserts {
		m[string(out.Address)] = append(m[string(out.Address)], in)
	}
	return m
}

// AddressUTxOs calls yield for each output unspent at the view's point that
// is paid to address, in the order of their TxIn keys (tx id, then index),
// until yield returns false. yield runs while the view is read: it must not
// use or close the view.
func (v *LedgerView) AddressUTxOs(address []byte, yield func(AddressUTxO) bool) error {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.snap == nil {
		return ErrClosed
	}
	// The volatile outputs: created by the diffs, oldest first, less what
	// a later diff spent (a diff's deletes go before its inserts, as in
	// flushDiff).
	created := map[ledger.TxIn]uint64{}
	for i, d := range v.diffs {
		for in := range created {
			if _, spent := d.Deletes[in]; spent {
				delete(created, in)
			}
		}
		for _, in := range v.created[i][string(address)] {
			created[in] = d.Inserts[in].Coin
		}
	}
	fresh := make([]AddressUTxO, 0, len(created))
	for in, coin := range created {
		fresh = append(fresh, AddressUTxO{In: in, Coin: coin})
	}
	slices.SortFunc(fresh, func(a, b AddressUTxO) int { return compareTxIn(a.In, b.In) })

	prefix := addressPrefixKey(address, 0)
	it, err := v.snap.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("chaindb: address index: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		_, in, err := parseAddressKey(it.Key())
		if err != nil {
			return fmt.Errorf("chaindb: %w", err)
		}
		if len(it.Value()) != 8 {
			return fmt.Errorf("chaindb: address index entry %s: value of %d bytes", in, len(it.Value()))
		}
		for len(fresh) > 0 && compareTxIn(fresh[0].In, in) < 0 {
			if !yield(fresh[0]) {
				return nil
			}
			fresh = fresh[1:]
		}
		if v.spentByDiffs(in) {
			continue // if created again since, it is among fresh
		}
		if !yield(AddressUTxO{In: in, Coin: binary.BigEndian.Uint64(it.Value())}) {
			return nil
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("chaindb: address index: %w", err)
	}
	for _, u := range fresh {
		if !yield(u) {
			return nil
		}
	}
	return nil
}

// spentByDiffs reports whether one of the view's diffs spends in.
func (v *LedgerView) spentByDiffs(in ledger.TxIn) bool {
	for _, d := range v.diffs {
		if _, ok := d.Deletes[in]; ok {
			return true
		}
	}
	return false
}

func compareTxIn(a, b ledger.TxIn) int {
	ka, kb := a.Key(), b.Key()
	return bytes.Compare(ka[:], kb[:])
}

// prefixEnd is the least key after every key that starts with prefix.
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i]++; end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil // all 0xff: no upper bound
}

// buildAddressIndex indexes the backing store of a database written before
// the address index existed, in one batch with the marker that says the
// index is complete. A database that has the marker is left alone.
func (db *DB) buildAddressIndex() error {
	if _, ok, err := get(db.store, keyAddressIndex); err != nil || ok {
		return err
	}
	b := db.store.NewBatch()
	defer b.Close()
	it, err := db.store.NewIter(prefixBounds(prefixUTxO))
	if err != nil {
		return fmt.Errorf("chaindb: %w", err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		in, out, err := decodeUTxOEntry(it.Key(), it.Value())
		if err != nil {
			return err
		}
		indexOutput(b, in, out)
		n++
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("chaindb: %w", err)
	}
	b.Set(keyAddressIndex, nil, nil)
	if err := db.store.Commit(b, pebble.Sync); err != nil {
		return fmt.Errorf("chaindb: building the address index: %w", err)
	}
	db.log.Info("built the address index of a database that predates it", "outputs", n)
	return nil
}

// errNoAddressIndex is Check's finding on a database written before the
// address index: not a fault, Open builds the index.
var errNoAddressIndex = errors.New("chaindb: no address index: the database was written by an older leiosnode; start the node on it once to build the index")

// checkAddressIndex verifies that the index holds exactly the backing
// store's outputs: each output has its entry, with its coin, and there are
// as many entries as outputs (so no entry names anything else).
func (db *DB) checkAddressIndex() error {
	if _, ok, err := get(db.store, keyAddressIndex); err != nil || !ok {
		return cmp.Or(err, errNoAddressIndex)
	}
	outputs, err := db.store.NewIter(prefixBounds(prefixUTxO))
	if err != nil {
		return err
	}
	defer outputs.Close()
	n := 0
	for outputs.First(); outputs.Valid(); outputs.Next() {
		in, out, err := decodeUTxOEntry(outputs.Key(), outputs.Value())
		if err != nil {
			return err
		}
		coin, ok, err := get(db.store, addressKey(out.Address, in))
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("the address index lacks output %s (address %x)", in, out.Address)
		case !bytes.Equal(coin, encodeCoin(out.Coin)):
			return fmt.Errorf("the address index has output %s with coin %x, the UTxO %d", in, coin, out.Coin)
		}
		n++
	}
	if err := outputs.Error(); err != nil {
		return err
	}
	entries, err := db.store.NewIter(prefixBounds(prefixAddress))
	if err != nil {
		return err
	}
	defer entries.Close()
	m := 0
	for entries.First(); entries.Valid(); entries.Next() {
		if _, _, err := parseAddressKey(entries.Key()); err != nil {
			return err
		}
		m++
	}
	if err := entries.Error(); err != nil {
		return err
	}
	if m != n {
		return fmt.Errorf("the address index has %d entries for %d outputs", m, n)
	}
	return nil
}

// decodeUTxOEntry decodes a backing store entry.
func decodeUTxOEntry(key, value []byte) (ledger.TxIn, ledger.TxOut, error) {
	in, err := ledger.TxInFromKey(key[1:])
	if err != nil {
		return in, ledger.TxOut{}, fmt.Errorf("chaindb: backing store key %x: %w", key, err)
	}
	out, err := ledger.DecodeTxOut(value)
	if err != nil {
		return in, out, fmt.Errorf("chaindb: backing store at %s: %w", in, err)
	}
	return in, out, nil
}
