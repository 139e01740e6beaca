package jsonschema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// bombSchema is the F1 schema of issue 21: n required strings of minLength
// 3000 under a pattern that costs Go's engine ~2,000 instructions a byte.
func bombSchema(n int) json.RawMessage {
	var props, req []string
	for i := range n {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"string","minLength":3000,"pattern":"^(x|y)*(?:[a-z]{0,100}){0,10}$"}`, i))
		req = append(req, fmt.Sprintf(`"p%d"`, i))
	}
	return json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `]}`)
}

// expired is a context whose deadline has passed.
func expired(t *testing.T) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	t.Cleanup(cancel)
	return ctx
}

func TestSynthesizeBudget(t *testing.T) {
	bigConst := `{"type":"array","minItems":1000,"items":{"const":"` + strings.Repeat("x", 10000) + `"}}`
	tests := []struct {
		name    string
		schema  json.RawMessage
		budget  Budget
		ctx     func(t *testing.T) context.Context
		wantErr error // nil: instances expected
	}{
		{"ordinary schema within the default budget", json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]{3}-[0-9]{4}$"},"n":{"type":"integer"}},"required":["id"]}`), Budget{}, nil, nil},
		{"F1 schema, 300 properties, default budget", bombSchema(300), Budget{}, nil, ErrBudget},
		{"F1 schema, one property, small work budget", bombSchema(1), Budget{Steps: 1_000_000}, nil, errWorkBudget},
		{"F1 schema, one property, fits a larger budget", bombSchema(1), Budget{Steps: 50_000_000}, nil, nil},
		{"long strings over the data budget", json.RawMessage(`{"type":"array","minItems":1000,"items":{"type":"string","minLength":4000}}`), Budget{Bytes: 1 << 20}, nil, errDataBudget},
		{"a large const repeated over the data budget", json.RawMessage(bigConst), Budget{}, nil, errDataBudget},
		{"deadline already passed", bombSchema(3), Budget{}, expired, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx(t)
			}
			got, err := SynthesizeContext(ctx, tt.schema, SynthOptions{MaxInstances: 1, Budget: tt.budget})
			switch {
			case tt.wantErr == nil && (err != nil || len(got) == 0):
				t.Fatalf("got %d instances, %v", len(got), err)
			case tt.wantErr != nil && (!errors.Is(err, tt.wantErr) || got != nil):
				t.Fatalf("got %d instances, error %v; want %v", len(got), err, tt.wantErr)
			}
			if tt.wantErr != nil && !strings.Contains(err.Error(), "synthesis budget exceeded") && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %q does not say the budget was exceeded", err)
			}
		})
	}
}

// The meter's accounting: work stops within one charge of the budget, and
// after it stops every match is refused without running.
func TestMeterStopsWork(t *testing.T) {
	m := newMeter(context.Background(), Budget{Steps: 10_000_000})
	r, err := newMatcher(`^(x|y)*(?:[a-z]{0,100}){0,10}$`, m)
	if err != nil {
		t.Fatal(err)
	}
	if r.size < 1000 {
		t.Fatalf("program size %d: the pattern should expand to about 2,000 instructions", r.size)
	}
	s := strings.Repeat("x", 3000)
	matches := 0
	for range 100 {
		if !r.MatchString(s) {
			break
		}
		matches++
	}
	// Each match is charged size × 3001 steps (~6M): the budget allows one.
	if matches != 1 || !errors.Is(m.stopped(), ErrBudget) {
		t.Fatalf("%d matches ran within a 10M-step budget; stopped: %v", matches, m.stopped())
	}
	if again, _ := newMatcher(`^other$`, m); again.MatchString("other") {
		t.Fatal("a stopped meter still matched")
	}
	var unmetered *meter
	if !unmetered.step(1<<62) || !unmetered.take(1<<62) || unmetered.stopped() != nil {
		t.Fatal("a nil meter must never stop")
	}
}

// TestMeasureBudget: how a measurement stopped is reported. The F1 schema
// is over the default budget in TestSynthesizeBudget; here a hundredth of it
// stops it the same way, at a hundredth of the work (the default budget is
// spent once, on ten properties, which are over it too).
func TestMeasureBudget(t *testing.T) {
	tests := []struct {
		name      string
		schema    json.RawMessage
		budget    Budget
		ctx       func(t *testing.T) context.Context
		stoppedBy string
		stage     string
	}{
		{"F1 schema over a small budget", bombSchema(300), Budget{Steps: DefaultBudgetSteps / 100}, nil, StoppedBudget, "while synthesizing instances"},
		{"F1 schema, ten properties: over the default budget too", bombSchema(10), Budget{}, nil, StoppedBudget, "while synthesizing instances"},
		{"deadline already passed", bombSchema(3), Budget{}, expired, StoppedDeadline, "while synthesizing instances"},
		{"ordinary schema", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","enum":["x","y"]}},"required":["a"]}`), Budget{}, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx(t)
			}
			m := MeasureContext(ctx, tt.schema, tt.budget)
			if m.StoppedBy != tt.stoppedBy || m.StoppedStage != tt.stage {
				t.Fatalf("stopped_by %q stage %q", m.StoppedBy, m.StoppedStage)
			}
			if tt.stoppedBy == StoppedBudget && m.StoppedBudgetPart != "work" {
				t.Errorf("budget part %q", m.StoppedBudgetPart)
			}
			if tt.stoppedBy != "" && (m.Instances != 0 || m.Leaves != 0 || m.Shapes != 0) {
				t.Errorf("a stopped measurement claims figures: %+v", m)
			}
			if tt.stoppedBy == "" && (m.Shapes == 0 || m.ShapesRejected != m.Shapes) {
				t.Errorf("ordinary schema: %+v", m)
			}
		})
	}
}

// A budget that runs out in the per-leaf stage keeps the other figures and
// samples the leaves. The budget is found by trying: the meter is
// deterministic, so the figures are too.
func TestMeasureBudgetStopsPerLeafStageOnly(t *testing.T) {
	var props, req []string
	for i := range 40 {
		props = append(props, fmt.Sprintf(`"f%d":{"type":"string","pattern":"^[a-z]{2,12}[0-9]{0,3}$"}`, i))
		req = append(req, fmt.Sprintf(`"f%d"`, i))
	}
	raw := json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `]}`)
	full := newMeter(context.Background(), Budget{Steps: 1 << 40})
	whole := measure(raw, full)
	if whole.Shapes == 0 || whole.ShapesRejected != whole.Shapes || whole.LeavesCapped {
		t.Fatalf("unbounded: %+v", whole)
	}
	used := int64(1<<40) - full.steps
	for steps := used - 1; steps > used/4; steps -= used / 64 {
		m := MeasureContext(context.Background(), raw, Budget{Steps: steps})
		if m.StoppedBy != "" {
			continue
		}
		if m.ShapesRejected != m.Shapes || !m.LeavesCapped || m.Leaves >= whole.Leaves || m.LeavesStoppedBy != "work budget" {
			t.Fatalf("budget %d of %d: %+v", steps, used, m)
		}
		return
	}
	t.Fatalf("no budget below %d stopped in the per-leaf stage only", used)
}

// Shape sampling runs under the same budget: a budget that runs out while
// the variants are generated stops the measurement, with no figures.
func TestMeasureBudgetStopsShapeSampling(t *testing.T) {
	var props []string
	for i := range 6 {
		props = append(props, fmt.Sprintf(`"f%d":{"type":["string","null"],"pattern":"^[a-z]{2,12}[0-9]{0,3}$"}`, i))
	}
	raw := json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)
	full := newMeter(context.Background(), Budget{Steps: 1 << 40})
	if whole := measure(raw, full); whole.ShapesRejected == 0 || whole.ShapesRejected == whole.Shapes || whole.Shapes <= whole.Instances {
		t.Fatalf("unbounded: %+v", whole)
	}
	used := int64(1<<40) - full.steps
	for steps := used - 1; steps > 0; steps -= max(used/256, 1) {
		m := MeasureContext(context.Background(), raw, Budget{Steps: steps})
		if m.StoppedStage != "while sampling shapes" {
			continue
		}
		if m.StoppedBy != StoppedBudget || m.Shapes != 0 || m.Instances != 0 {
			t.Fatalf("budget %d of %d: %+v", steps, used, m)
		}
		return
	}
	t.Fatalf("no budget below %d stopped while sampling shapes", used)
}

// BenchmarkMeasureSynthBomb measures the F1 schema (300 properties, ~27 KB):
// the default budget stops it.
func BenchmarkMeasureSynthBomb(b *testing.B) {
	raw := bombSchema(300)
	for b.Loop() {
		if a := Measure(raw); a.StoppedBy != StoppedBudget {
			b.Fatalf("not stopped: %+v", a)
		}
	}
}
