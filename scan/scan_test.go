package scan

import (
	"context"
	"encoding/json"
	"maps"
	"net/http/httptest"
	"os"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testbedserver"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/sdkserver"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
)

func TestMain(m *testing.M) {
	if code, ok := serveTapped(); ok {
		os.Exit(code)
	}
	if code, ok := testbed.ServeChild(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// stdioConfig runs a testbed profile as a real subprocess (this test binary, re-executed).
func stdioConfig(t testing.TB, o testbed.Options) mcp.Config {
	t.Helper()
	cmd, err := testbed.ChildCommand(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(o)
	// The testbed answers every request (server/discover too) unless a
	// test says otherwise: only a hang waits out testutil.Hang, and no
	// outcome depends on how fast a loaded machine runs the server.
	return mcp.Config{
		Command:         cmd.Args,
		Env:             []string{testbed.EnvChild + "=" + string(b)},
		RequestTimeout:  testutil.Hang,
		DiscoverTimeout: testutil.Hang,
	}
}

func httpConfig(t *testing.T, o testbed.Options, path string) mcp.Config {
	t.Helper()
	srv := testbedserver.HTTP(t, o)
	return mcp.Config{URL: srv.URL + path, RequestTimeout: testutil.Hang}
}

func runScan(t *testing.T, cfg mcp.Config) *Report {
	t.Helper()
	rep, err := Run(context.Background(), cfg, Options{ToolVersion: "test", Deadline: testutil.Hang})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// stable returns the report without its meta block, as JSON.
func stable(t *testing.T, r *Report) []byte {
	t.Helper()
	c := *r
	c.Meta = Meta{}
	c.Target.Command = nil // the test binary's path
	c.Target.URL = ""      // a random port
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, name+".golden.json", got)
}

func rules(r *Report) []string {
	var out []string
	for _, f := range r.Findings {
		if !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	slices.Sort(out)
	return out
}

func probe(r *Report, name string) Probe {
	for _, p := range r.Probes {
		if p.Name == name {
			return p
		}
	}
	return Probe{}
}

func TestProfilesOverStdio(t *testing.T) {
	tests := []struct {
		profile   string
		era       string
		partial   bool // the inventory is expected not to complete
		wantRules []string
		noRules   []string
		check     func(t *testing.T, r *Report)
	}{
		{profile: "good", era: "modern",
			noRules: []string{RuleErrUnknownMethod, RuleErrUnknownTool, RuleErrMissingArgs, RuleErrParse, RuleErrInvalidRequest, RuleCacheHints, RuleStdoutPurity},
			check: func(t *testing.T, r *Report) {
				if *r.Scores.ErrorConformance != 1 || *r.Scores.SpecConformance != 1 {
					t.Errorf("good profile scores: %+v", r.Scores)
				}
				if r.Scores.Enforceable < 4 {
					t.Errorf("good profile: %d enforceable tools", r.Scores.Enforceable)
				}
			}},
		{profile: "vacuous", era: "modern", wantRules: []string{RuleVacuous, RuleWrapped},
			check: func(t *testing.T, r *Report) {
				if r.Scores.Vacuous == 0 || r.Scores.Enforceable == 0 {
					t.Errorf("vacuous profile: want both verdicts (one $ref schema is enforceable), got %+v", r.Scores)
				}
			}},
		// Issue 15: format uri on two nullable fields and URIs checked only
		// as array items are partial (the both-null and empty-array shapes
		// validate corrupted); release keeps a checked field in every shape.
		{profile: "partial", era: "modern", wantRules: []string{RulePartialContract},
			check: func(t *testing.T, r *Report) {
				got := map[string]Contract{}
				for _, tr := range r.Tools {
					got[tr.Name] = tr.OutputContract
				}
				want := map[string]Contract{"package_links": ContractPartial, "mirrors": ContractPartial, "release": ContractEnforceable}
				if !maps.Equal(got, want) {
					t.Errorf("output contracts %v, want %v", got, want)
				}
				s := r.Scores
				if s.Partial != 2 || s.Enforceable != 1 || s.Vacuous != 0 || *s.RejectsAnyRate != 1 || *s.EnforceableRate != 0.3333 {
					t.Errorf("scores %+v", s)
				}
			}},
		{profile: "sloppy-errors", era: "modern",
			wantRules: []string{RuleErrUnknownMethod, RuleErrUnknownTool},
			check: func(t *testing.T, r *Report) {
				if probe(r, "unknown_method").Verdict != VerdictAccepted {
					t.Errorf("unknown_method: %+v", probe(r, "unknown_method"))
				}
				if *r.Scores.ErrorConformance == 1 {
					t.Error("sloppy errors scored fully conformant")
				}
			}},
		{profile: "modern", era: "modern", noRules: []string{RuleVersionNeg}},
		{profile: "legacy", era: "legacy", noRules: []string{RuleVersionNeg},
			check: func(t *testing.T, r *Report) {
				if r.Protocol.Revision != "2024-11-05" {
					t.Errorf("legacy revision %q", r.Protocol.Revision)
				}
				if probe(r, "missing_meta").Name != "" {
					t.Error("missing_meta probe ran on a legacy server")
				}
			}},
		{profile: "bad-schema", era: "modern", wantRules: []string{RuleSchemaInvalid, RuleDuplicateTool, RuleToolName, RuleInputSchemaType},
			check: func(t *testing.T, r *Report) {
				found := false
				for _, tr := range r.Tools {
					if tr.OutputContract == "invalid" {
						found = true
					}
					if tr.OutputContract == "vacuous" && tr.Reason != "" && strings.Contains(tr.Reason, "compile") {
						t.Errorf("a non-compiling schema was scored vacuous: %+v", tr)
					}
				}
				if !found {
					t.Error("no invalid output contract")
				}
			}},
		{profile: "noisy-stdout", era: "modern", wantRules: []string{RuleStdoutPurity}},
		// Issue 38: a JSON line that is no JSON-RPC message breaks stdout's
		// purity as a plain-text line does.
		{profile: "json-preamble", era: "modern", wantRules: []string{RuleStdoutPurity},
			check: func(t *testing.T, r *Report) {
				f := finding(r, RuleStdoutPurity)
				if f.Severity != report.SeverityError || f.Message != "1 line(s) on stdout that are not JSON-RPC messages (1 JSON but no JSON-RPC message)" ||
					f.Requirement == nil || f.Requirement.ID != "REQ-STDIO-02" {
					t.Errorf("stdout purity finding %+v", f)
				}
			}},
		// Issue 38: a server on the TypeScript SDK's McpServer: the SDK is
		// named, its behaviours are info notes naming it, nothing warns.
		{profile: "typical", era: "legacy", wantRules: []string{RuleInvalidCursor, RuleErrUnknownTool},
			check: func(t *testing.T, r *Report) {
				if r.SDK == nil || r.SDK.Name != SDKTypeScript || r.SDK.Layer != "McpServer" || len(r.SDK.Evidence) != 2 {
					t.Errorf("sdk %+v", r.SDK)
				}
				for _, id := range []string{RuleInvalidCursor, RuleErrUnknownTool} {
					if f := finding(r, id); f.Severity != report.SeverityInfo || !strings.Contains(f.Message, "TypeScript SDK's McpServer") {
						t.Errorf("%s: %+v", id, f)
					}
				}
				if report.Fails(r.Findings, report.SeverityWarn) {
					t.Errorf("findings at warn or error: %+v", r.Findings)
				}
			}},
		{profile: "cursor-loop", era: "modern", wantRules: []string{RuleCursorLoop}},
		{profile: "ref-cycle", era: "modern"},
		// A 10,000-deep schema is beyond what encoding/json takes: the list
		// is still read, the deep tool's schema is refused (it does not
		// compile under the depth limit), and the other tools are scored.
		{profile: "deep-schema", era: "modern", wantRules: []string{RuleSchemaInvalid, RuleUnconstrained},
			check: func(t *testing.T, r *Report) {
				contracts := map[string]Contract{}
				for _, tr := range r.Tools {
					contracts[tr.Name] = tr.OutputContract
				}
				if len(contracts) != 2 || contracts["deep"] != ContractInvalid || contracts["echo"] == "" {
					t.Errorf("output contracts %v, want deep invalid and echo scored", contracts)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.profile, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, stdioConfig(t, testbed.Options{Profile: tc.profile}))
			if r.Established == tc.partial {
				t.Fatalf("established = %v, want %v: %+v", r.Established, !tc.partial, r.Findings)
			}
			if r.Protocol.Era != tc.era || r.Protocol.Transport != "stdio" {
				t.Errorf("protocol %+v, want era %s over stdio", r.Protocol, tc.era)
			}
			got := rules(r)
			for _, w := range tc.wantRules {
				if !slices.Contains(got, w) {
					t.Errorf("missing finding %s; got %v", w, got)
				}
			}
			for _, n := range tc.noRules {
				if slices.Contains(got, n) {
					t.Errorf("unexpected finding %s", n)
				}
			}
			if tc.check != nil {
				tc.check(t, r)
			}
			golden(t, "stdio-"+tc.profile, stable(t, r))
		})
	}
}

// finding returns r's first finding of rule.
func finding(r *Report, rule string) report.Finding {
	for _, f := range r.Findings {
		if f.Rule == rule {
			return f
		}
	}
	return report.Finding{}
}

// TestLateDiscoverAnswer: a dual-era server that starts slower than the
// discover probe's timeout answers the probe late, but before its
// initialize reply: the scan is of 2026-07-28 whatever the load made of
// the timeout (issue 38; 2025-11-25 before).
func TestLateDiscoverAnswer(t *testing.T) {
	cfg := stdioConfig(t, testbed.Options{Profile: "slow-start", StartDelay: time.Second})
	cfg.DiscoverTimeout = 300 * time.Millisecond
	r := runScan(t, cfg)
	if r.Protocol.Revision != mcp.Rev20260728 || !slices.ContainsFunc(r.Protocol.Detection, func(d string) bool {
		return strings.Contains(d, "server/discover answered late, before initialize's reply")
	}) {
		t.Fatalf("protocol %+v", r.Protocol)
	}
}

// TestStdioShutdownByRevision: a server that ignores its stdin closing is
// a warning where 2026-07-28 asks it to exit (REQ-STDIO-03, SHOULD), and
// advice (info) before it, where no revision asks.
func TestStdioShutdownByRevision(t *testing.T) {
	for _, tc := range []struct {
		rev string
		sev report.Severity
		req string
	}{{mcp.Rev20260728, report.SeverityWarn, "REQ-STDIO-03"}, {mcp.Rev20251125, report.SeverityInfo, ""}} {
		t.Run(tc.rev, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, stdioConfig(t, testbed.Options{Profile: "linger", Revisions: []string{tc.rev}}))
			f := finding(r, RuleStdioShutdown)
			got := ""
			if f.Requirement != nil {
				got = f.Requirement.ID
			}
			if f.Severity != tc.sev || got != tc.req || !strings.HasPrefix(f.Message, "the server did not exit when its stdin closed") {
				t.Errorf("%+v", f)
			}
		})
	}
}

func TestReproducible(t *testing.T) {
	cfg := stdioConfig(t, testbed.Options{Profile: "vacuous"})
	a, b := stable(t, runScan(t, cfg)), stable(t, runScan(t, cfg))
	if string(a) != string(b) {
		t.Fatalf("two scans of the same server differ:\n%s\n---\n%s", a, b)
	}
}

func TestProfilesOverHTTP(t *testing.T) {
	tests := []struct {
		profile, reply, path, transport, revision string
	}{
		{"good", "json", testbed.PathMCP, "streamable-http", "2026-07-28"},
		{"good", "sse", testbed.PathMCP, "streamable-http", "2026-07-28"},
		{"sloppy-errors", "", testbed.PathMCP, "streamable-http", "2026-07-28"},
		// A 2024-11-05 server is found through its SSE endpoint.
		{"legacy", "", testbed.PathSSE, "http+sse", "2024-11-05"},
	}
	for _, tc := range tests {
		t.Run(tc.profile+"-"+tc.reply, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, httpConfig(t, testbed.Options{Profile: tc.profile, Reply: tc.reply}, tc.path))
			if !r.Established {
				t.Fatalf("not established: %+v", r.Findings)
			}
			if r.Protocol.Transport != tc.transport || r.Protocol.Revision != tc.revision {
				t.Errorf("protocol %+v, want %s over %s", r.Protocol, tc.revision, tc.transport)
			}
			for _, c := range r.Conformance {
				if c.ID == RuleStdoutPurity && c.Status != CheckNotApplicable {
					t.Errorf("stdout purity on HTTP: %+v", c)
				}
			}
			golden(t, "http-"+tc.profile+"-"+tc.reply, stable(t, r))
		})
	}
}

func TestForcedLegacyRevision(t *testing.T) {
	cfg := stdioConfig(t, testbed.Options{Profile: "good"})
	cfg.Protocol = mcp.Rev20250618
	r := runScan(t, cfg)
	if r.Protocol.Revision != mcp.Rev20250618 || !r.Protocol.Forced || r.Protocol.Era != "legacy" {
		t.Fatalf("forced revision: %+v", r.Protocol)
	}
	// Before 2025-11-25, -32602 for bad arguments is conformant too.
	if p := probe(r, "missing_required_args"); p.Conformant == nil || !*p.Conformant {
		t.Errorf("missing args on 2025-06-18: %+v", p)
	}
	for _, c := range r.Conformance {
		if c.ID == RuleCacheHints && c.Status != CheckNotApplicable {
			t.Errorf("cache hints checked on a legacy revision: %+v", c)
		}
	}
}

// TestSDKServer scans a server written with the official Go SDK.
func TestSDKServer(t *testing.T) {
	// The SDK's stateless handler speaks 2026-07-28; its stateful one only
	// the legacy revisions (checked below).
	srv := httptest.NewServer(sdkserver.Handler(sdkserver.Options{Stateless: true}))
	defer srv.Close()
	r := runScan(t, mcp.Config{URL: srv.URL, RequestTimeout: testutil.Hang})
	if r.Protocol.Revision != mcp.Rev20260728 || r.Protocol.Era != "modern" {
		t.Fatalf("Go SDK v1.8 server: %+v", r.Protocol)
	}
	for _, d := range r.Protocol.Detection {
		if strings.Contains(d, "initialize") {
			t.Errorf("modern negotiation used initialize: %v", r.Protocol.Detection)
		}
	}
	if r.Scores.Tools == 0 || r.Scores.Declared == 0 {
		t.Errorf("SDK tools not assessed: %+v", r.Scores)
	}
	if r.SDK != nil {
		t.Errorf("a Go SDK server taken for %+v", r.SDK)
	}
	legacy := runScan(t, mcp.Config{URL: srv.URL, RequestTimeout: testutil.Hang, Protocol: mcp.Rev20250618})
	if legacy.Protocol.Revision != mcp.Rev20250618 || legacy.Scores.Tools != r.Scores.Tools {
		t.Fatalf("forced legacy on the SDK server: %+v %+v", legacy.Protocol, legacy.Scores)
	}
	stateful := httptest.NewServer(sdkserver.Handler(sdkserver.Options{}))
	defer stateful.Close()
	fb := runScan(t, mcp.Config{URL: stateful.URL, RequestTimeout: testutil.Hang})
	if fb.Protocol.Era != "legacy" || !fb.Established {
		t.Fatalf("stateful SDK server should fall back to the legacy era: %+v", fb.Protocol)
	}
}

// TestHostile: every hostile server ends in bounded time with a finding that
// says what was not established, at default timeouts.
func TestHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("hostile servers run at default timeouts")
	}
	tests := []struct {
		name    string
		opts    testbed.Options
		maxCap  int
		anyRule []string
	}{
		{"hang", testbed.Options{Profile: "hang"}, 0, []string{RuleUnreachable}},
		{"crash", testbed.Options{Profile: "crash"}, 0, []string{RuleUnreachable, RuleIncomplete}},
		{"flood", testbed.Options{Profile: "flood", Delay: 200 * time.Millisecond}, 0, []string{RuleStdoutPurity, RuleIncomplete, RuleUnreachable}},
		{"hugeline", testbed.Options{Profile: "hugeline"}, 0, []string{RuleOversizeFrame, RuleIncomplete}},
		{"cursor-loop", testbed.Options{Profile: "cursor-loop"}, 0, []string{RuleCursorLoop}},
		{"deep-schema", testbed.Options{Profile: "deep-schema"}, 0, nil},
		{"ref-cycle", testbed.Options{Profile: "ref-cycle"}, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := stdioConfig(t, tc.opts)
			cfg.RequestTimeout, cfg.DiscoverTimeout = 0, 0 // defaults
			// but the start-up allowance, whose default minute (a cold npx)
			// TestStartupAllowance covers: a hung server would wait it out.
			cfg.StartupTimeout = 5 * time.Second
			stop := samplePeakHeap()
			start := time.Now()
			r := runScan(t, cfg)
			elapsed := time.Since(start)
			peak := stop()
			t.Logf("%s: %v, peak heap %d MiB, findings %v", tc.name, elapsed.Round(time.Millisecond), peak>>20, rules(r))
			if peak > 512<<20 {
				t.Errorf("peak heap %d MiB scanning %s", peak>>20, tc.name)
			}
			got := rules(r)
			if len(tc.anyRule) > 0 && !slices.ContainsFunc(tc.anyRule, func(s string) bool { return slices.Contains(got, s) }) {
				t.Errorf("want one of %v, got %v", tc.anyRule, got)
			}
		})
	}
}

// samplePeakHeap samples the live heap every few milliseconds until the
// returned function is called, which reports the largest value seen.
func samplePeakHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak
	}
}

func TestUnreachable(t *testing.T) {
	r := runScan(t, mcp.Config{URL: "http://127.0.0.1:1/mcp", RequestTimeout: testutil.Hang})
	if r.Established || !slices.Contains(rules(r), RuleUnreachable) {
		t.Fatalf("unreachable: %+v", r.Findings)
	}
	if r.Scores.ErrorHandling != nil || r.Scores.OutputCoverage != nil {
		t.Errorf("scores claimed for an unreachable server: %+v", r.Scores)
	}
	r = runScan(t, mcp.Config{Command: []string{"/nonexistent/mcp-server"}})
	if r.Established || !slices.Contains(rules(r), RuleUnreachable) {
		t.Fatalf("missing binary: %+v", r.Findings)
	}
}

func TestFindingsCarryNoSeverityOutsideCatalogue(t *testing.T) {
	r := runScan(t, stdioConfig(t, testbed.Options{Profile: "sloppy-errors"}))
	cat := Catalogue()
	for _, f := range r.Findings {
		if _, ok := cat.Lookup(f.Rule); !ok {
			t.Errorf("finding with undocumented rule %s", f.Rule)
		}
		if f.Severity.Rank() == 0 {
			t.Errorf("finding without severity: %+v", f)
		}
	}
	if _, err := report.Merge(cat); err != nil {
		t.Fatal(err)
	}
}

// TestStartupAllowance: a stdio server slower to start than the
// per-request timeout is scanned within its start-up allowance (the
// default one: a cold npx download), and one that writes nothing within
// the allowance fails saying so. The durations are scaled down from the
// defaults (10 s per request, 60 s to start) so that the test waits
// seconds, not a minute.
func TestStartupAllowance(t *testing.T) {
	t.Run("slower than a request, within the allowance", func(t *testing.T) {
		t.Parallel()
		cfg := stdioConfig(t, testbed.Options{Profile: "slow-start", StartDelay: 2 * time.Second})
		cfg.RequestTimeout, cfg.DiscoverTimeout = 500*time.Millisecond, 200*time.Millisecond
		r := runScan(t, cfg)
		if f := finding(r, RuleUnreachable); f.Rule != "" || r.StartupFailure != nil {
			t.Fatalf("a server within its start-up allowance was not scanned: %+v %+v", f, r.StartupFailure)
		}
	})
	t.Run("the allowance used up", func(t *testing.T) {
		t.Parallel()
		cfg := stdioConfig(t, testbed.Options{Profile: "slow-start", StartDelay: time.Minute})
		cfg.RequestTimeout, cfg.StartupTimeout, cfg.DiscoverTimeout = 200*time.Millisecond, time.Second, 200*time.Millisecond
		r := runScan(t, cfg)
		f := finding(r, RuleUnreachable)
		if r.StartupFailure == nil || r.StartupFailure.StartupTimeoutMS != 1000 || !strings.Contains(f.Message, "wrote nothing within its start-up allowance of 1s") {
			t.Fatalf("startup failure %+v, finding %+v", r.StartupFailure, f)
		}
	})
}
