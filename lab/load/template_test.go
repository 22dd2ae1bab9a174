package load

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/leiosnode/leiosnode/internal/cpuwork"
	"github.com/leiosnode/leiosnode/ledger"
)

// TestTemplateMakesTheLedgersBytes: every tx a chain makes, by its
// template or not, is byte for byte the plain payment the ledger's builder
// makes from the same output — whatever the chain's funds, where its
// change crosses 2³² lovelace (and the tx shrinks) and where the funds
// run out — and the template makes most of them.
func TestTemplateMakesTheLedgersBytes(t *testing.T) {
	params := ledger.DefaultParams()
	funds := newTestFunds(t, 1, 0)
	key, address := funds.keys[0], funds.addresses[0]
	minOutput := ledger.MinOutputCoin(params, address)
	rapid.Check(t, func(t *rapid.T) {
		const steps = 30
		coin := rapid.OneOf(
			rapid.Uint64Range(1<<32-20*200_000, 1<<32+10*200_000), // crossing 2³²
			rapid.Uint64Range(minOutput, minOutput+steps*200_000), // running out
			rapid.Uint64Range(1<<32+1, 1<<50),
		).Draw(t, "coin")
		c := newTxChain("payment-0", 0, key, address, ledger.GenesisTxIn(address), coin)
		byTemplate := 0
		for step := range steps {
			in, before := c.head, c.coin
			checked := c.template != nil && c.template.checked
			built, err := c.next(params)
			want, wantErr := ledger.BuildPayment(params, []ledger.TxIn{in}, before, nil, address, nil, []ed25519.PrivateKey{key})
			if errors.Is(wantErr, ledger.ErrCannotBalance) {
				if !errors.Is(err, errFundsExhausted) {
					t.Fatalf("step %d: the ledger cannot balance %d lovelace, the chain built %v (%v)", step, before, built, err)
				}
				return
			}
			if err != nil || wantErr != nil {
				t.Fatalf("step %d: %v, the ledger's %v", step, err, wantErr)
			}
			if !bytes.Equal(built.Bytes(), want.Bytes()) {
				t.Fatalf("step %d (template used: %v): the chain's tx\n%x\nthe ledger's\n%x", step, checked, built.Bytes(), want.Bytes())
			}
			decoded(t, built)
			if checked {
				byTemplate++
			}
			c.admit()
		}
		if c.noTemplate || byTemplate < steps/2 {
			t.Fatalf("%d of %d txs made by the template (dropped: %v)", byTemplate, steps, c.noTemplate)
		}
	})
}

// TestTemplateDroppedOnOtherBytes: a template whose first tx is not the
// ledger's is never used: the chain sends the ledger's tx and builds with
// the ledger from then on.
func TestTemplateDroppedOnOtherBytes(t *testing.T) {
	params := ledger.DefaultParams()
	funds := newTestFunds(t, 1, 1<<40)
	c := funds.chains(1)[0]
	// The first tx is the ledger's, and the template is derived from it.
	if _, err := c.next(params); err != nil {
		t.Fatal(err)
	}
	c.admit()
	if c.template == nil || c.template.checked {
		t.Fatalf("template %+v, want one derived and not yet checked", c.template)
	}
	c.template.fee++ // a template that makes a tx the ledger would not
	in, coin := c.head, c.coin
	built, err := c.next(params)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ledger.BuildPayment(params, []ledger.TxIn{in}, coin, nil, c.address, nil, []ed25519.PrivateKey{c.key})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built.Bytes(), want.Bytes()) || c.template != nil || !c.noTemplate {
		t.Fatalf("after a template made other bytes: the ledger's tx sent %v, template %v, dropped %v", bytes.Equal(built.Bytes(), want.Bytes()), c.template, c.noTemplate)
	}
	c.admit()
	if _, err := c.next(params); err != nil || c.template != nil {
		t.Fatalf("a template derived again (%v)", err)
	}
}

// BenchmarkChainBuild is the CPU of building and signing a chain's next
// plain payment, by the template and by the ledger's builder alone: the
// process's CPU time over the txs (cpu-µs/tx), which a busy machine does
// not inflate as it does the time on the clock.
func BenchmarkChainBuild(b *testing.B) {
	params := ledger.DefaultParams()
	for _, tc := range []struct {
		name       string
		noTemplate bool
	}{{"template", false}, {"ledger", true}} {
		b.Run(tc.name, func(b *testing.B) {
			funds := newTestFunds(b, 1, 1<<50)
			c := funds.chains(1)[0]
			c.noTemplate = tc.noTemplate
			before, clock := cpuwork.ProcessTime()
			for b.Loop() {
				if _, err := c.next(params); err != nil {
					b.Fatal(err)
				}
				c.admit()
				c.admitted = c.admitted[:0] // keep the benchmark's memory flat
			}
			if after, _ := cpuwork.ProcessTime(); clock {
				b.ReportMetric(float64((after-before).Nanoseconds())/1000/float64(b.N), "cpu-µs/tx")
			}
		})
	}
}
