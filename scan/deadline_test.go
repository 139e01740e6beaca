package scan

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/memnet"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// scanWithin runs a scan and fails the test if Run has not returned long
// after its deadline (testutil.Hang): only a hang reaches that. When a scan
// returns, in virtual time, is TestDeadlineCutsAreNotServerFaults's
// http case.
func scanWithin(t *testing.T, cfg mcp.Config, o Options) *Report {
	t.Helper()
	type result struct {
		r   *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := Run(context.Background(), cfg, o)
		done <- result{r, err}
	}()
	wall := time.NewTimer(o.Deadline + testutil.Hang)
	defer wall.Stop()
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatal(res.err)
		}
		return res.r
	case <-wall.C:
		t.Fatalf("scan still running %v after its %v deadline", testutil.Hang, o.Deadline)
		return nil
	}
}

func toolReport(r *Report, name string) (ToolReport, bool) {
	for _, tr := range r.Tools {
		if tr.Name == name {
			return tr, true
		}
	}
	return ToolReport{}, false
}

// F1 (issue 21): a tool list of ~27 KB whose schema requires 300 strings of
// minLength 3000 under a pattern Go's engine matches slowly used to keep the
// scan busy for minutes past --deadline 20s. Now the schema is unassessed
// with its reason, within its synthesis budget, long before the deadline;
// with --invoke-tool the plan gets no arguments for the same reason.
func TestSynthBombStaysWithinBudget(t *testing.T) {
	transports := []struct {
		name string
		cfg  func(t *testing.T) mcp.Config
	}{
		{"stdio", func(t *testing.T) mcp.Config { return stdioConfig(t, testbed.Options{Profile: "synth-bomb"}) }},
		{"http", func(t *testing.T) mcp.Config { return httpConfig(t, testbed.Options{Profile: "synth-bomb"}, "/mcp") }},
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			// A budget a hundredth of the default: reached in well under a
			// second even under the race detector on a loaded machine, so
			// the budget, not the deadline, stops the assessment.
			o := Options{ToolVersion: "test", Deadline: 20 * time.Second, SkipSecondConnection: true,
				Budget: jsonschema.Budget{Steps: jsonschema.DefaultBudgetSteps / 100},
				Invoke: InvokeOptions{Tools: []string{"bomb"}}}
			r := scanWithin(t, tc.cfg(t), o)
			tr, ok := toolReport(r, "bomb")
			if !ok {
				t.Fatalf("tool bomb not listed: %v", rules(r))
			}
			if !tr.Undetermined || !strings.Contains(tr.Reason, "synthesis budget exceeded") {
				t.Errorf("bomb: undetermined %v, reason %q", tr.Undetermined, tr.Reason)
			}
			if tr.StoppedBy != "budget" {
				t.Errorf("bomb: stopped_by %q, want budget", tr.StoppedBy)
			}
			unassessed := false
			for _, f := range r.Findings {
				if f.Rule == RuleUnassessed && f.Tool == "bomb" && strings.Contains(f.Message, "synthesis budget exceeded") {
					unassessed = true
				}
			}
			if !unassessed {
				t.Errorf("no %s finding for bomb naming the budget: %+v", RuleUnassessed, r.Findings)
			}
			if r.Invocation == nil || len(r.Invocation.Calls) != 1 {
				t.Fatalf("invocation plan: %+v", r.Invocation)
			}
			if c := r.Invocation.Calls[0]; c.Outcome != OutcomeNoArguments || !strings.Contains(c.Detail, "synthesis budget exceeded") || len(c.Arguments) != 0 {
				t.Errorf("bomb plan: outcome %q, detail %q, %d bytes of arguments", c.Outcome, c.Detail, len(c.Arguments))
			}
			if tr, ok := toolReport(r, "echo"); !ok || tr.OutputContract != "enforceable" {
				t.Errorf("echo beside the bomb: %+v", tr)
			}
		})
	}
}

// F11 (issue 21): a server that answers every request after a delay, under a
// deadline shorter than the whole scan. Probes the deadline cut short used
// to be graded as the server's timeouts ("expected -32700, got timeout").
// Now they are not established (deadline), not graded, and one finding
// names them; the scan returns at its deadline. Over HTTP the scan runs in
// a synctest bubble against the testbed on an in-memory network, so its
// clock is virtual: what is established, what is cut and when the scan
// returns are exact. Over stdio the server is a process of its own, on
// the real clock: the whole scan takes at least 18 delays (a floor: load
// only adds to it), the inventory 4 and the server's start, so a deadline
// of 10 delays cuts probes whatever the load, and leaves the inventory 6
// delays for a slow start.
func TestDeadlineCutsAreNotServerFaults(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			const delay, deadline = 300 * time.Millisecond, 1500 * time.Millisecond
			slow := testbed.Options{Profile: "flood", Delay: delay, Reply: "json"}
			h, err := testbed.NewHandler(slow)
			if err != nil {
				t.Fatal(err)
			}
			n := memnet.Serve(h)
			defer n.Close()
			cfg := mcp.Config{URL: "http://127.0.0.1" + testbed.PathMCP, HTTPClient: n.Client(), RequestTimeout: 5 * time.Second}
			start := time.Now()
			r, err := Run(context.Background(), cfg, Options{ToolVersion: "test", Deadline: deadline})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > deadline {
				t.Errorf("the scan returned %v after it started, past its %v deadline", took, deadline)
			}
			if !r.Established {
				t.Fatalf("the inventory did not complete within %v: %v", deadline, r.Findings)
			}
			checkDeadlineCuts(t, r, deadline, delay)
		})
	})
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		const delay, deadline = time.Second, 10 * time.Second
		slow := testbed.Options{Profile: "flood", Delay: delay, Reply: "json"}
		r := scanWithin(t, stdioConfig(t, slow), Options{ToolVersion: "test", Deadline: deadline})
		if !r.Established {
			t.Skipf("the inventory did not complete within %v on this machine: %v", deadline, r.Findings)
		}
		checkDeadlineCuts(t, r, deadline, delay)
	})
}

// checkDeadlineCuts checks that some probes were cut by the scan deadline,
// and that none of them is graded or blamed on the server.
func checkDeadlineCuts(t *testing.T, r *Report, deadline, delay time.Duration) {
	t.Helper()
	cut := 0
	for _, p := range r.Probes {
		if p.Verdict == VerdictTimeout {
			t.Errorf("probe %s graded as a server timeout: %+v", p.Name, p)
		}
		if p.Established != nil {
			cut++
			if *p.Established || p.Reason != ReasonDeadline || p.Verdict != VerdictSkipped || p.Conformant != nil {
				t.Errorf("probe %s cut by the deadline: %+v", p.Name, p)
			}
		}
	}
	if cut == 0 {
		t.Fatalf("no probe was cut by a %v deadline with a %v server: %+v", deadline, delay, r.Probes)
	}
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Rule, "MCP-ERR-") && strings.Contains(f.Message, "got timeout") {
			t.Errorf("a probe cut by the deadline was blamed on the server: %+v", f)
		}
	}
	summary := false
	for _, f := range r.Findings {
		if f.Rule == RuleIncomplete && strings.Contains(f.Message, "cut short by the scan deadline") {
			summary = true
		}
	}
	if !summary {
		t.Errorf("no finding names what the deadline cut short: %+v", r.Findings)
	}
	for _, c := range r.Conformance {
		if c.Reason != "" && c.Status != CheckNotEstablished {
			t.Errorf("check %s cut by the deadline graded %s", c.ID, c.Status)
		}
	}
}

// Cut-short probes are not counted by the error scores: only answered ones
// are graded.
func TestScoresSkipDeadlineCuts(t *testing.T) {
	no, yes := false, true
	r := &Report{Probes: []Probe{
		{Name: "unknown_method", Verdict: VerdictJSONRPCError, Conformant: &yes},
		{Name: "malformed_json", Verdict: VerdictSkipped, Established: &no, Reason: ReasonDeadline},
	}, Tools: []ToolReport{
		{Name: "a", OutputContract: "vacuous", Undetermined: true, StoppedBy: ReasonDeadline},
		{Name: "b", OutputContract: "vacuous", Undetermined: true, StoppedBy: "budget"},
	}}
	sc := ScoresOf(r)
	if sc.ErrorConformance == nil || *sc.ErrorConformance != 1 {
		t.Errorf("error conformance %v, want 1 (the cut probe is not graded)", sc.ErrorConformance)
	}
	if sc.Vacuous != 1 || sc.Declared != 2 {
		t.Errorf("vacuous %d declared %d: a contract the deadline cut is declared, not graded vacuous", sc.Vacuous, sc.Declared)
	}
}
