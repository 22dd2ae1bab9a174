package cpuwork

import (
	"context"
	"runtime/pprof"
	"testing"
)

func TestKindsAreLabelledAsNamed(t *testing.T) {
	seen := map[Kind]bool{}
	for _, k := range Kinds() {
		if seen[k] {
			t.Errorf("%s listed twice", k)
		}
		seen[k] = true
		Do(context.Background(), k, func(ctx context.Context) {
			if v, _ := pprof.Label(ctx, LabelKey); v != string(k) {
				t.Errorf("Do(%s): label %q", k, v)
			}
		})
		if v, _ := pprof.Label(Context(context.Background(), k), LabelKey); v != string(k) {
			t.Errorf("Context(%s): label %q", k, v)
		}
	}
}

func TestDoReplacesTheWorkLabelOnly(t *testing.T) {
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("peer", "p1"))
	Do(ctx, Fetch, func(ctx context.Context) {
		Do(ctx, ClosureValidation, func(ctx context.Context) {
			if v, _ := pprof.Label(ctx, LabelKey); v != string(ClosureValidation) {
				t.Errorf("nested Do: work=%q", v)
			}
			if v, _ := pprof.Label(ctx, "peer"); v != "p1" {
				t.Errorf("nested Do: peer=%q", v)
			}
		})
	})
}

func TestUnknownKindIsLabelledAsGiven(t *testing.T) {
	Do(context.Background(), Kind("mining"), func(ctx context.Context) {
		if v, _ := pprof.Label(ctx, LabelKey); v != "mining" {
			t.Errorf("label %q", v)
		}
	})
}
