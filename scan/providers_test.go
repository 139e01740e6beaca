package scan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
)

// TestProviderVerdicts: every tool carries every profile's verdict, the
// report one summary per profile with its source date, and only the
// profiles named become findings.
func TestProviderVerdicts(t *testing.T) {
	cfg := httpConfig(t, testbed.Options{Profile: "good"}, "/mcp")
	rep, err := Run(context.Background(), cfg, Options{Deadline: time.Minute, Providers: []string{"openai-strict", "gemini"},
		SkipSecondConnection: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tools) == 0 {
		t.Fatal("no tools")
	}
	for _, tr := range rep.Tools {
		if len(tr.Providers) != 5 {
			t.Errorf("%s: %d verdicts, want one per profile", tr.Name, len(tr.Providers))
		}
	}
	if len(rep.Providers) != 5 {
		t.Fatalf("%d provider summaries", len(rep.Providers))
	}
	for _, p := range rep.Providers {
		if p.Read == "" || p.Tools != len(rep.Tools) || p.Accepted+p.AcceptedWithLoss+p.Rejected != p.Tools {
			t.Errorf("summary %+v does not add up", p)
		}
		if want := p.Profile == "openai-strict" || p.Profile == "gemini"; p.Selected != want {
			t.Errorf("%s selected %v", p.Profile, p.Selected)
		}
	}
	summaries := 0
	for _, f := range rep.Findings {
		if !strings.HasPrefix(f.Rule, "MCP-PROV-") {
			continue
		}
		if f.Rule == RuleProviderSummary {
			summaries++
			if !strings.Contains(f.Message, "sources read ") {
				t.Errorf("summary without its source date: %q", f.Message)
			}
			continue
		}
		if !strings.HasPrefix(f.Message, "openai-strict ") && !strings.HasPrefix(f.Message, "gemini ") {
			t.Errorf("a finding of a profile not named: %q", f.Message)
		}
		if f.Tool == "" || (!strings.HasPrefix(f.Pointer, "/inputSchema") && f.Pointer != "/name") || !strings.Contains(f.Evidence, "sources read ") {
			t.Errorf("finding without tool, pointer or source date: %+v", f)
		}
		if f.Severity.Rank() > report.SeverityWarn.Rank() {
			t.Errorf("%s at %s: provider findings are warn at most", f.Rule, f.Severity)
		}
	}
	if summaries != 2 {
		t.Errorf("%d summary findings, want one per profile named", summaries)
	}
}

func TestProviderUnknownProfileRefused(t *testing.T) {
	_, err := Run(context.Background(), httpConfig(t, testbed.Options{}, "/mcp"), Options{Deadline: time.Minute, Providers: []string{"openai-stict"}})
	if err == nil || !strings.Contains(err.Error(), "openai-strict") {
		t.Fatalf("err %v, want one naming the known profiles", err)
	}
}
