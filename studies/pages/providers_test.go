package pages

import (
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/scan"
	"github.com/mcpdrill/mcpdrill/scan/provider"
	"github.com/mcpdrill/mcpdrill/studies"
)

// verdicts builds one tool's verdicts: "openai-strict=rejected/accepted"
// is a rejection that the converter repairs.
func verdicts(specs ...string) []provider.Verdict {
	var out []provider.Verdict
	for _, s := range specs {
		id, rest, _ := strings.Cut(s, "=")
		outcome, after, _ := strings.Cut(rest, "/")
		v := provider.Verdict{Profile: id, Outcome: provider.Outcome(outcome), AfterConversion: provider.Outcome(after)}
		if v.Outcome != provider.Accepted {
			v.Violations = []provider.Violation{{Constraint: id + "/x", Pointer: "/inputSchema", Effect: provider.EffectReject}}
		}
		out = append(out, v)
	}
	return out
}

func providerRows() []studies.Row {
	row := func(name string, tools ...[]provider.Verdict) studies.Row {
		r := studies.Row{Name: name, Status: studies.StatusScanned}
		for i, vs := range tools {
			r.Tools = append(r.Tools, scan.ToolReport{Name: string(rune('a' + i)), Providers: vs})
		}
		return r
	}
	return []studies.Row{
		// taken whole by both
		row("one", verdicts("anthropic-strict=accepted", "openai-strict=accepted")),
		// openai-strict rejects one tool, its converter repairs it;
		// anthropic-strict rejects it
		row("two", verdicts("anthropic-strict=accepted", "openai-strict=accepted"),
			verdicts("anthropic-strict=rejected", "openai-strict=rejected/accepted")),
		// openai-strict rejects beyond repair
		row("three", verdicts("anthropic-strict=accepted_with_loss", "openai-strict=rejected")),
		// not counted: a variant, a failed row, a row without tools
		func() studies.Row {
			r := row("four", verdicts("openai-strict=rejected"))
			r.VariantOf = "one"
			return r
		}(),
		{Name: "five", Status: studies.StatusFailed},
		row("six"),
	}
}

func TestProviderShares(t *testing.T) {
	a := studies.Aggregate(providerRows())
	if len(a.Providers) != 2 {
		t.Fatalf("%d profiles", len(a.Providers))
	}
	an, op := a.Providers[0], a.Providers[1]
	if an.Profile != "anthropic-strict" || op.Profile != "openai-strict" {
		t.Fatalf("order %s %s", an.Profile, op.Profile)
	}
	if an.Read == "" {
		t.Error("no source date")
	}
	if op.Servers != 3 || op.Tools != 4 || op.ServersTaken != 1 || op.ServersTakenAfterConversion != 2 || op.Taken() != 2 || op.TakenAfterConversion != 3 {
		t.Errorf("openai-strict %+v", op)
	}
	if an.Servers != 3 || an.ServersTaken != 2 || an.AcceptedWithLoss != 1 || pct(an.ServersTakenShare) != "66.7%" {
		t.Errorf("anthropic-strict %+v", an)
	}
	rows := providerRows()
	for _, tt := range []struct {
		m         Measured1005
		as, after int
	}{
		{Study1005[0], 2, 1}, // openai-strict: two, three; after the converter only three
		{Study1005[1], 1, 1}, // anthropic-strict: two
		{Study1005[3], 1, 1}, // passes OpenAI's converter, fails Anthropic's: two
	} {
		n, d := Count1005(rows, tt.m, false)
		na, _ := Count1005(rows, tt.m, true)
		if n != tt.as || na != tt.after || d != 3 {
			t.Errorf("%s: %d and %d after conversion of %d, want %d and %d of 3", tt.m.What, n, na, d, tt.as, tt.after)
		}
	}
	var b strings.Builder
	writeProviders(&b, &studies.Results{Servers: rows, Aggregates: a})
	for _, want := range []string{"## Provider acceptance", "| openai-strict | " + op.Read + " | 33.3% (1/3) | 66.7% (2/3) |", "27.6% (170/617)", "66.7% (2/3) | 33.3% (1/3) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}

func TestPageVerdicts(t *testing.T) {
	pv := pageVerdicts(verdicts("openai-strict=rejected/accepted", "gemini=accepted_with_loss"))
	if pv[0].Mark != "✗" || !strings.Contains(pv[0].Title, "openai-strict/x") || !strings.Contains(pv[0].Title, "after conversion accepted") || pv[1].Mark != "~" {
		t.Fatalf("%+v", pv)
	}
}
