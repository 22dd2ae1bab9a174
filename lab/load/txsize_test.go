package load

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/consensus"
	"github.com/leiosnode/leiosnode/ledger"
)

func TestParseTxSize(t *testing.T) {
	tests := []struct {
		in       string
		want     TxSize
		mean     float64
		bad      string // the error names this; "" for none
		spelling string // String, when not in
	}{
		{in: "200", want: TxSize{Min: 200, Max: 200}, mean: 200},
		{in: "200-16384", want: TxSize{Min: 200, Max: 16384}, mean: 3673.3},
		{in: "large", want: LargeTxSize, mean: 3673.3},
		{in: "1000-1000", want: TxSize{Min: 1000, Max: 1000}, mean: 1000, spelling: "1000"},
		{in: "", bad: `tx size ""`},
		{in: "big", bad: `tx size "big"`},
		{in: "0", bad: "positive"},
		{in: "-5", bad: `"-5"`},
		{in: "300-200", bad: "MIN above MAX"},
		{in: "200-", bad: `"200-"`},
		{in: "+200", bad: `"+200"`},
		{in: "1.5", bad: `"1.5"`},
		{in: "200-16384-5", bad: `"200-16384-5"`},
		{in: "2k", bad: `"2k"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTxSize(tt.in)
			if tt.bad != "" {
				if !errors.Is(err, ErrTxSizeSyntax) || !strings.Contains(err.Error(), tt.bad) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("ParseTxSize(%q) = %+v, %v; want a one-line error naming %q", tt.in, got, err, tt.bad)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseTxSize(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			if math.Abs(got.Mean()-tt.mean) > 0.1 {
				t.Errorf("mean %.1f, want %.1f", got.Mean(), tt.mean)
			}
			spelling := tt.in
			if tt.spelling != "" {
				spelling = tt.spelling
			}
			if got.String() != spelling || !got.Padded() {
				t.Errorf("String() = %q, Padded %v; want %q, true", got.String(), got.Padded(), spelling)
			}
		})
	}
	if (TxSize{}).Padded() || (TxSize{}).String() != "" {
		t.Error("the zero TxSize pads")
	}
}

// TestTxTargets: a chain's targets are log-uniform within the bounds
// exactly, with the distribution's mean, and the same for the same chain
// name, other for another.
func TestTxTargets(t *testing.T) {
	const draws = 200_000
	targets := newTxTargets(LargeTxSize, "payment-0")
	least, most, sum, belowMid := math.MaxInt, 0, 0.0, 0
	mid := math.Sqrt(200 * 16384) // the median of a log-uniform
	for range draws {
		n := targets.next()
		least, most, sum = min(least, n), max(most, n), sum+float64(n)
		if float64(n) < mid {
			belowMid++
		}
	}
	mean := sum / draws
	t.Logf("large: %d draws from %d to %d, mean %.0f (distribution's %.0f), %.3f below the median", draws, least, most, mean, LargeTxSize.Mean(), float64(belowMid)/draws)
	switch {
	case least < 200 || most > 16384:
		t.Errorf("targets from %d to %d, outside 200–16384", least, most)
	case least > 202 || most < 16200:
		t.Errorf("targets from %d to %d: the bounds are not reached", least, most)
	case math.Abs(mean/LargeTxSize.Mean()-1) > 0.01:
		t.Errorf("mean target %.0f, want %.0f within 1 %%", mean, LargeTxSize.Mean())
	case math.Abs(float64(belowMid)/draws-0.5) > 0.01:
		t.Errorf("%.3f of the targets below the median %.0f, want half", float64(belowMid)/draws, mid)
	}

	a, b, other := newTxTargets(LargeTxSize, "payment-1"), newTxTargets(LargeTxSize, "payment-1"), newTxTargets(LargeTxSize, "payment-2")
	same, differ := true, false
	for range 100 {
		x := a.next()
		same = same && x == b.next()
		differ = differ || x != other.next()
	}
	if !same || !differ {
		t.Errorf("the same chain's targets repeat: %v; another chain's differ: %v", same, differ)
	}
	fixed := newTxTargets(TxSize{Min: 777, Max: 777}, "payment-0")
	for range 10 {
		if n := fixed.next(); n != 777 {
			t.Fatalf("a fixed size drew %d", n)
		}
	}
}

// TestPaddingSizes: padding of every size a tx can need is exactly that
// size, and valid metadata (EncodeMetadata checks it).
func TestPaddingSizes(t *testing.T) {
	for size := minPadding; size <= 16_384; size++ {
		aux, err := padding(size)
		if err != nil {
			t.Fatalf("padding(%d): %v", size, err)
		}
		if len(aux) != size {
			t.Fatalf("padding(%d) is %d bytes", size, len(aux))
		}
	}
	if _, err := padding(minPadding - 1); err == nil {
		t.Error("padding below the smallest message")
	}
}

// TestTxChainSizes: a chain with the large mix makes txs of its targets'
// sizes — exactly, but for targets below the plain payment or in the gap
// above it — within the bounds, at the distribution's mean, each one
// valid against the ledger's rules (signatures included) on the UTxO its
// predecessors left.
func TestTxChainSizes(t *testing.T) {
	const txs = 1500
	params := ledger.DefaultParams()
	funds := newTestFunds(t, 1, 1<<40)
	key, address := funds.keys[0], funds.addresses[0]
	utxo := ledger.MapUTxO{ledger.GenesisTxIn(address): {Address: address, Coin: funds.coin}}
	c := newTxChain("payment-0", 0, key, address, ledger.GenesisTxIn(address), funds.coin)
	c.targets = newTxTargets(LargeTxSize, c.name)
	targets := newTxTargets(LargeTxSize, c.name) // the same draws, to compare
	least, most, sum := math.MaxInt, 0, 0
	for i := range txs {
		plain, err := c.buildPadded(params, c.head, c.coin, 0)
		if err != nil {
			t.Fatal(err)
		}
		target := targets.next()
		built, err := c.next(params)
		if err != nil {
			t.Fatalf("tx %d: %v", i, err)
		}
		tx := decoded(t, built)
		checkSize(t, i, tx.Size(), target, plain.Size())
		if tx.Fee != params.MinFee(tx.Size()) {
			t.Fatalf("tx %d: fee %d, want the minimum %d for its %d bytes", i, tx.Fee, params.MinFee(tx.Size()), tx.Size())
		}
		diff, err := ledger.Apply(params, utxo, 0, tx)
		if err != nil {
			t.Fatalf("tx %d of %d bytes: the ledger rejects it: %v", i, tx.Size(), err)
		}
		applyDiff(utxo, diff)
		c.admit()
		least, most, sum = min(least, tx.Size()), max(most, tx.Size()), sum+tx.Size()
	}
	mean := float64(sum) / txs
	t.Logf("%d txs from %d to %d bytes, mean %.0f (the distribution's %.0f)", txs, least, most, mean, LargeTxSize.Mean())
	if least < 200 || most > 16384 {
		t.Errorf("txs from %d to %d bytes, outside 200–16384", least, most)
	}
	if math.Abs(mean/LargeTxSize.Mean()-1) > 0.05 {
		t.Errorf("mean tx %.0f bytes, want %.0f within 5 %%", mean, LargeTxSize.Mean())
	}
	if len(utxo) != 1 || utxo[c.head].Coin != c.coin {
		t.Fatalf("UTxO %v, want only %v worth %d", utxo, c.head, c.coin)
	}
}

// checkSize fails unless a tx drawn for target is of its size: its plain
// payment's when the target is below it, else at least the target, and
// exactly it when the target leaves room for the smallest padding (and
// the 4 bytes a change crossing 2³² lovelace may shed).
func checkSize(t interface {
	Helper()
	Fatalf(string, ...any)
}, i, size, target, plain int) {
	t.Helper()
	switch smallestPadded := plain + 44; {
	case target <= plain && size != plain:
		t.Fatalf("tx %d: %d bytes for a target of %d below its plain %d", i, size, target, plain)
	case target > plain && target >= smallestPadded+4 && size != target:
		t.Fatalf("tx %d: %d bytes, want its target %d", i, size, target)
	case target > plain && target < smallestPadded+4 && (size < target || size > smallestPadded+4):
		t.Fatalf("tx %d: %d bytes for a target of %d in the gap above its plain %d", i, size, target, plain)
	}
}

// TestTxChainSizeProperty: whatever the chain's funds (a change crossing
// 2³² lovelace shrinks the tx by 4 bytes) and the target, up to the max tx
// size, the tx is of the target's size and valid.
func TestTxChainSizeProperty(t *testing.T) {
	params := ledger.DefaultParams()
	funds := newTestFunds(t, 1, 0)
	key, address := funds.keys[0], funds.addresses[0]
	rapid.Check(t, func(t *rapid.T) {
		coin := rapid.OneOf(rapid.Uint64Range(1<<32-1_000_000, 1<<32+1_000_000), rapid.Uint64Range(2_000_000, 1<<45)).Draw(t, "coin")
		target := rapid.IntRange(1, int(params.MaxTxSize)).Draw(t, "target")
		c := newTxChain("payment-0", 0, key, address, ledger.GenesisTxIn(address), coin)
		plain, err := c.buildPadded(params, c.head, c.coin, 0)
		if errors.Is(err, ledger.ErrCannotBalance) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		tx, err := c.buildPadded(params, c.head, c.coin, target)
		if errors.Is(err, ledger.ErrCannotBalance) {
			return // the padding's fee is more than the funds
		}
		if err != nil {
			t.Fatal(err)
		}
		checkSize(t, 0, tx.Size(), target, plain.Size())
		utxo := ledger.MapUTxO{ledger.GenesisTxIn(address): {Address: address, Coin: coin}}
		if _, err := ledger.Apply(params, utxo, 0, tx); err != nil {
			t.Fatalf("%d bytes for %d: %v", tx.Size(), target, err)
		}
	})
}

// TestFirehoseBytes: a firehose of large txs counts their bytes offered
// and on chain, its report states them in TxkB/s, and the nodes (the real
// ledger rules) admit every one.
func TestFirehoseBytes(t *testing.T) {
	f, fakes := fakeDevnet(t, 2, 4, Options{Rate: 100, TxSize: LargeTxSize})
	for range 5 {
		for _, c := range f.chains {
			stepOnce(f, c)
		}
	}
	if err := forgeAll(fakes...); err != nil {
		t.Fatal(err)
	}
	for _, c := range f.chains {
		stepOnce(f, c) // one more each, left in the mempools
	}
	counts := f.Counts()
	f.mu.Lock()
	f.stats.FirstSent = f.stats.LastSent.Add(-time.Second) // as if sent over a second
	f.mu.Unlock()
	r, _ := f.Settle(context.Background(), consensus.Clock{Start: time.Now(), SlotLength: time.Millisecond}, nil)

	// Each step sends a batch of each chain's txs: five on chain, one in
	// the mempools.
	batches := uint64(4 * f.batch)
	var sent, onChain uint64
	for _, c := range f.chains {
		for i, tx := range c.txs() {
			sent += uint64(tx.Size)
			if i < 5*f.batch {
				onChain += uint64(tx.Size)
			}
			if tx.Size < 200 || tx.Size > 16384 {
				t.Errorf("%s: a tx of %d bytes", c.name, tx.Size)
			}
		}
	}
	if r.Admitted != 6*batches || r.OnChain != 5*batches || len(r.Rejected) != 0 || len(r.StoppedChains) != 0 {
		t.Fatalf("report %+v: want %d admitted, %d on chain, none rejected", r, 6*batches, 5*batches)
	}
	if counts.SubmittedBytes != sent || counts.AdmittedBytes != sent || r.OfferedBytes != sent || r.OnChainBytes != onChain {
		t.Errorf("bytes: counted %d sent, %d admitted; reported %d offered, %d on chain; want %d, %d on chain", counts.SubmittedBytes, counts.AdmittedBytes, r.OfferedBytes, r.OnChainBytes, sent, onChain)
	}
	wantOffered := r.OfferedPerSecond * float64(sent) / float64(6*batches) / 1000
	if math.Abs(r.OfferedTxkBPerSecond-wantOffered) > 1e-9 || math.Abs(r.OnChainTxkBPerSecond-wantOffered*float64(onChain)/float64(sent)) > 1e-9 || r.TxSize != "large" {
		t.Errorf("offered %.2f TxkB/s (want %.2f), on chain %.2f, tx size %q", r.OfferedTxkBPerSecond, wantOffered, r.OnChainTxkBPerSecond, r.TxSize)
	}
	var out strings.Builder
	r.Print(&out)
	if !strings.Contains(out.String(), " TxkB/s (tx size large), ") {
		t.Errorf("the report's lines do not state the bytes:\n%s", out.String())
	}
	if w := f.chains[0].window; w != resubmitWindow {
		t.Errorf("a chain of the large mix keeps %d txs to send again, want %d", w, resubmitWindow)
	}
	if w := windowFor(16384); w != 512 {
		t.Errorf("a chain of 16 kB txs keeps %d txs to send again, want 512 (8 MiB)", w)
	}
}
