package apitypes

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestStagesAreFlatFields: every stage is a field of its own, named as
// the stage, at the top of EBTimes and of its stageMs — the JSON the
// node's list has always written — and At reaches each.
func TestStagesAreFlatFields(t *testing.T) {
	var e EBTimes
	for i, stage := range Stages() {
		at, ms := time.Unix(int64(i), 0), int64(i)
		*e.At(stage), *e.StageMs.At(stage) = &at, &ms
	}
	raw, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var fields struct {
		Top     map[string]any
		StageMs map[string]any `json:"stageMs"`
	}
	if err := json.Unmarshal(raw, &fields.Top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, stage := range Stages() {
		if _, ok := fields.Top[string(stage)]; !ok {
			t.Errorf("no %q at the top of %s", stage, raw)
		}
		if _, ok := fields.StageMs[string(stage)]; !ok {
			t.Errorf("no %q in stageMs of %s", stage, raw)
		}
	}
	if strings.Contains(string(raw), "EBStages") {
		t.Errorf("the embedded stages are a field of their own: %s", raw)
	}
}
