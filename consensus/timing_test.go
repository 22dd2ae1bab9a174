package consensus

import (
	"math"
	"testing"
	"time"
)

// The protocol time of the two templates the project ships: the devnet's
// (100 ms slots, f 0.1) and the CIP's (1 s slots, f 0.05), both with the
// prototype's Leios parameters.
func TestTiming(t *testing.T) {
	leios := DefaultLeiosParams()
	for _, tc := range []struct {
		name             string
		timing           Timing
		rbInterval       time.Duration
		pCert            float64
		syncLag          uint64
		inclusion, hedge time.Duration
	}{
		{"devnet", Timing{SlotLength: 100 * time.Millisecond, F: 0.1, Leios: leios},
			time.Second, math.Pow(0.9, 9), 88, 8_744 * time.Millisecond, 240 * time.Millisecond},
		{"testnet", Timing{SlotLength: time.Second, F: 0.05, Leios: leios},
			20 * time.Second, math.Pow(0.95, 9), 180, 115_201 * time.Millisecond, 2400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := tc.timing
			if got := tm.MeanRBInterval(); got != tc.rbInterval {
				t.Errorf("mean RB interval %v, want %v", got, tc.rbInterval)
			}
			if got := tm.CertProbability(); math.Abs(got-tc.pCert) > 1e-12 {
				t.Errorf("p_cert %v, want %v", got, tc.pCert)
			}
			if got := tm.SyncLagSlots(); got != tc.syncLag {
				t.Errorf("sync lag %d slots, want %d", got, tc.syncLag)
			}
			if got := tm.InclusionBound(); (got - tc.inclusion).Abs() > time.Millisecond {
				t.Errorf("inclusion bound %v, want %v", got, tc.inclusion)
			}
			if got := tm.HedgeAfter(); got != tc.hedge {
				t.Errorf("hedge after %v, want %v", got, tc.hedge)
			}
			if got := tm.VerdictHorizon(); got != 4*tc.rbInterval {
				t.Errorf("verdict horizon %v, want %v", got, 4*tc.rbInterval)
			}
		})
	}
}

// A genesis's timing is what its file says, f read from its decimal text.
func TestGenesisTiming(t *testing.T) {
	g := &Genesis{SlotLengthMs: 1000, ActiveSlotsCoeff: "0.05", Leios: DefaultLeiosParams()}
	tm := g.Timing()
	if tm.SlotLength != time.Second || tm.F != 0.05 || tm.Leios.MinCertGap != 10 {
		t.Fatalf("timing %+v", tm)
	}
}
