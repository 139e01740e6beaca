package studies

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// fakeScan builds a report from "key=value" arguments of the command:
// enf, part, vac, none (tool counts), sleep (a duration), fail (unreachable,
// refused, incomplete, error), probe (a verdict for both probes).
func fakeScan(active *atomic.Int32, peak *atomic.Int32) ScanFunc {
	return func(ctx context.Context, cfg mcp.Config, o scan.Options) (*scan.Report, error) {
		n := active.Add(1)
		defer active.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		kv := map[string]string{}
		if cfg.URL != "" {
			kv["fail"] = "unreachable"
			cfg.Command = []string{cfg.URL}
		}
		for _, a := range cfg.Command[1:] {
			k, v, _ := strings.Cut(a, "=")
			kv[k] = v
		}
		if d, err := time.ParseDuration(kv["sleep"]); err == nil {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		r := &scan.Report{SchemaVersion: scan.SchemaVersion, Tools: []scan.ToolReport{}, Probes: []scan.Probe{}, Conformance: []scan.Check{}, Findings: []report.Finding{}}
		switch kv["fail"] {
		case "error":
			return nil, errors.New("scanner broke in " + cfg.Dir)
		case "unreachable":
			r.Findings = append(r.Findings, report.Finding{Rule: scan.RuleUnreachable, Severity: report.SeverityError, Message: "no MCP session could be opened: exec " + cfg.Command[0] + " in " + cfg.Dir})
			return r, nil
		case "refused":
			r.Findings = append(r.Findings, report.Finding{Rule: scan.RuleRefused, Severity: report.SeverityError, Message: "no protocol revision could be agreed"})
			return r, nil
		}
		r.Server = scan.Server{Name: "fake", Version: "1"}
		r.Protocol = scan.Protocol{Revision: "2025-06-18", Era: "legacy", Transport: "stdio"}
		if kv["fail"] == "incomplete" {
			r.Findings = append(r.Findings, report.Finding{Rule: scan.RuleIncomplete, Severity: report.SeverityError, Message: "tools/list did not complete"})
			return r, nil
		}
		r.Established = true
		add := func(kind string, count int) {
			for i := range count {
				tr := scan.ToolReport{Name: fmt.Sprintf("%s_%d", kind, i), OutputContract: scan.Contract(kind)}
				switch kind {
				case "enforceable":
					v := 0.5
					tr.LeafRate, tr.Leaves, tr.LeavesRejected = &v, 2, 1
				case "partial":
					v := 0.5
					tr.LeafRate, tr.Leaves, tr.LeavesRejected, tr.Shapes, tr.ShapesRejected = &v, 2, 1, 2, 1
				case "vacuous":
					v := 0.0
					tr.LeafRate, tr.Leaves = &v, 2
				}
				r.Tools = append(r.Tools, tr)
			}
		}
		atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
		add("enforceable", atoi(kv["enf"]))
		add("partial", atoi(kv["part"]))
		add("vacuous", atoi(kv["vac"]))
		add("none", atoi(kv["none"]))
		verdict := scan.VerdictJSONRPCError
		if v := kv["probe"]; v != "" {
			verdict = scan.Verdict(v)
		}
		handled, yes := verdict.Handled(), true
		r.Probes = append(r.Probes,
			scan.Probe{Name: "unknown_tool", Verdict: verdict, Conformant: &handled, Expected: "jsonrpc_error -32602"},
			scan.Probe{Name: "unknown_method", Verdict: scan.VerdictJSONRPCError, Conformant: &yes, Expected: "jsonrpc_error -32601"})
		r.Conformance = append(r.Conformance, scan.Check{ID: "MCP-CONF-X", Status: scan.CheckPass})
		for _, tr := range r.Tools {
			if tr.OutputContract == scan.ContractNone {
				r.Findings = append(r.Findings, report.Finding{Rule: "MCP-OUT-NO-SCHEMA", Severity: report.SeverityInfo, Tool: tr.Name, Pointer: "/outputSchema", Message: "no outputSchema declared"})
			}
		}
		r.Scores = scan.ScoresOf(r)
		r.Meta.Stderr = []string{"listening in " + cfg.Dir}
		return r, nil
	}
}

const fakeSpec = `{"mcpServers": {
  "zeta":    {"command": "fake", "args": ["enf=1", "vac=1", "none=0", "sleep=1ms"], "package": "zeta@1.0.0", "sdk": "typescript"},
  "alpha":   {"command": "fake", "args": ["enf=0", "vac=0", "none=10", "sleep=40ms"], "sdk": "go-sdk"},
  "mid":     {"command": "fake", "args": ["enf=0", "part=1", "vac=2", "none=1", "probe=accepted", "sleep=20ms"], "env": {"TOKEN": "${STUDY_TEST_TOKEN}"}, "sdk": "fastmcp"},
  "down":    {"command": "bin/fake", "args": ["fail=unreachable"]},
  "old":     {"command": "fake", "args": ["fail=refused"]},
  "partial": {"command": "fake", "args": ["fail=incomplete"]},
  "broken":  {"command": "fake", "args": ["fail=error"]},
  "needs":   {"command": "fake", "args": ["--key", "${STUDY_MISSING_VAR}"]},
  "off":     {"command": "fake", "disabled": true},
  "zeta-again": {"command": "fake", "args": ["enf=1", "vac=1"], "variant_of": "zeta"},
  "remote":  {"url": "https://mcp.example.test/mcp", "headers": {"Authorization": "Bearer ${STUDY_TEST_TOKEN}"}, "args": [], "command": ""}
}}`

func parseFake(t *testing.T) *Spec {
	t.Helper()
	s, err := ParseSpec([]byte(fakeSpec), "/nonexistent/spec")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fakeOptions(active, peak *atomic.Int32, jobs int) Options {
	return Options{
		Jobs:        jobs,
		Deadline:    10 * time.Second,
		ToolVersion: "test",
		Scan:        fakeScan(active, peak),
		LookupEnv: func(k string) (string, bool) {
			if k == "STUDY_TEST_TOKEN" {
				return "s3cret-token-value", true
			}
			return "", false
		},
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
}

func TestRunKeepsEveryServerSortedAndBounded(t *testing.T) {
	var active, peak atomic.Int32
	spec := parseFake(t)
	var mu sync.Mutex
	var events []Event
	o := fakeOptions(&active, &peak, 3)
	o.Progress = func(ev Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }
	res, err := Run(context.Background(), spec, o)
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Fatalf("peak concurrency %d, want 2..3 with -j 3", p)
	}
	var names []string
	for _, r := range res.Servers {
		names = append(names, r.Name)
	}
	want := []string{"alpha", "broken", "down", "mid", "needs", "off", "old", "partial", "remote", "zeta", "zeta-again"}
	// "remote" has an empty command and a URL.
	if !slices.Equal(names, want) {
		t.Fatalf("rows = %v, want %v", names, want)
	}
	byName := map[string]Row{}
	for _, r := range res.Servers {
		byName[r.Name] = r
	}
	checks := []struct{ name, status, failure, reason string }{
		{"alpha", StatusScanned, "", ""},
		{"broken", StatusFailed, FailInternal, "scanner broke in ${WORK_DIR}"},
		{"down", StatusFailed, FailUnreachable, "no MCP session could be opened: exec ${SPEC_DIR}/bin/fake in ${WORK_DIR}"},
		{"needs", StatusFailed, FailConfig, "environment variable(s) not set: STUDY_MISSING_VAR"},
		{"off", StatusSkipped, "", "disabled in servers.json"},
		{"partial", StatusFailed, FailIncomplete, "tools/list did not complete"},
	}
	for _, c := range checks {
		r := byName[c.name]
		if r.Status != c.status || r.Failure != c.failure || r.Reason != c.reason {
			t.Errorf("%s: status %q failure %q reason %q; want %q %q %q", c.name, r.Status, r.Failure, r.Reason, c.status, c.failure, c.reason)
		}
	}
	if byName["old"].Failure != FailRefused {
		t.Errorf("old: failure %q", byName["old"].Failure)
	}
	if res.Aggregates.Variants != 1 || res.Aggregates.ServerWeighted.Servers != 3 || res.Aggregates.ToolWeighted.Tools != 16 {
		t.Errorf("variant not left out of the weighted figures: %+v", res.Aggregates)
	}
	if got := res.Aggregates.Probes["unknown_method"].Ran; got != 4 {
		t.Errorf("probe tally %d, want 4 (variants included)", got)
	}
	if got := byName["mid"].EnvNames; !slices.Equal(got, []string{"TOKEN"}) {
		t.Errorf("mid env names %v", got)
	}
	if got := byName["remote"].HeaderNames; !slices.Equal(got, []string{"Authorization"}) {
		t.Errorf("remote header names %v", got)
	}
	raw, _ := json.Marshal(res)
	if bytes.Contains(raw, []byte("s3cret")) {
		t.Fatal("a secret value reached results.json")
	}
	if bytes.Contains(raw, []byte("/nonexistent/spec")) || bytes.Contains(raw, []byte("mcpdrill-study-")) {
		t.Fatalf("a machine path reached results.json outside meta:\n%s", raw)
	}
	if sm := res.Meta.Servers["zeta"]; len(sm.Stderr) != 1 || sm.Stderr[0] != "listening in ${WORK_DIR}" {
		t.Errorf("zeta stderr meta %v", sm.Stderr)
	}
	// Progress: one start and one done per server, Done reaching Total.
	starts, dones := 0, 0
	for _, ev := range events {
		if ev.Kind == EventStart {
			starts++
		} else {
			dones++
		}
		if ev.Total != len(want) {
			t.Fatalf("event total %d", ev.Total)
		}
	}
	if starts != len(want) || dones != len(want) || events[len(events)-1].Done != len(want) {
		t.Fatalf("events: %d starts, %d dones", starts, dones)
	}
	validate(t, res)
}

func validate(t *testing.T, res *Results) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, res); err != nil {
		t.Fatal(err)
	}
	if err := Validate(buf.Bytes()); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	back, err := Read(&buf)
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Fatal("results do not round-trip through Write and Read")
	}
}

// outsideMeta is the document without its meta block.
func outsideMeta(t *testing.T, r *Results) string {
	t.Helper()
	c := *r
	c.Meta = Meta{}
	var buf bytes.Buffer
	if err := Write(&buf, &c); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestShardedRunMergesToUnsharded(t *testing.T) {
	var active, peak atomic.Int32
	spec := parseFake(t)
	whole, err := Run(context.Background(), spec, fakeOptions(&active, &peak, 2))
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Results
	seen := map[string]int{}
	for k := 3; k >= 1; k-- { // merge must not depend on the order of its inputs
		o := fakeOptions(&active, &peak, 2)
		o.Shard = Shard{Index: k, Count: 3}
		p, err := Run(context.Background(), spec, o)
		if err != nil {
			t.Fatal(err)
		}
		validate(t, p)
		for _, r := range p.Servers {
			seen[r.Name]++
		}
		parts = append(parts, p)
	}
	for _, e := range spec.Servers {
		if seen[e.Name] != 1 {
			t.Fatalf("%s is in %d shards", e.Name, seen[e.Name])
		}
	}
	merged, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := outsideMeta(t, merged), outsideMeta(t, whole); got != want {
		t.Fatalf("merged shards differ from the unsharded run:\n--- merged\n%s\n--- whole\n%s", got, want)
	}
	if len(merged.Meta.Shards) != 3 || len(merged.Meta.Servers) != len(spec.Servers) {
		t.Fatalf("merged meta: %d shards, %d servers", len(merged.Meta.Shards), len(merged.Meta.Servers))
	}
	validate(t, merged)

	// Merge refuses what it cannot join.
	other := *parts[0]
	other.SpecHash = "sha256:" + strings.Repeat("0", 64)
	slow := *parts[1]
	slow.Settings.DeadlineMS++
	bad := []struct {
		name  string
		parts []*Results
		want  string
	}{
		{"none", nil, "no results"},
		{"missing shard", parts[:2], "missing shard(s) 1/3"},
		{"duplicate", []*Results{parts[0], parts[0], parts[1]}, "given twice"},
		{"other spec", []*Results{&other, parts[1], parts[2]}, "another servers.json"},
		{"other settings", []*Results{parts[0], &slow, parts[2]}, "other settings"},
		{"mixed", []*Results{whole, parts[0]}, "shard"},
	}
	for _, b := range bad {
		if _, err := Merge(b.parts); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err = %v, want %q", b.name, err, b.want)
		}
	}
	// An unsharded result merges to itself.
	self, err := Merge([]*Results{whole})
	if err != nil {
		t.Fatal(err)
	}
	if outsideMeta(t, self) != outsideMeta(t, whole) {
		t.Fatal("merging one unsharded result changed it")
	}
}

// A launched server's output tail reaches the meta block, above all when the
// launch dies before listening.
func TestLaunchStderrKept(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the launch command is a POSIX shell")
	}
	spec, err := ParseSpec([]byte(`{"mcpServers": {"dies": {"url": "http://127.0.0.1:${PORT}/mcp",
  "launch": {"command": "/bin/sh", "args": ["-c", "echo launch-said-this >&2; exit 3"], "ready": "5s"}}}}`), "/nonexistent/spec")
	if err != nil {
		t.Fatal(err)
	}
	var active, peak atomic.Int32
	res, err := Run(context.Background(), spec, fakeOptions(&active, &peak, 1))
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Servers[0]; r.Failure != FailLaunch {
		t.Fatalf("row %+v, want a launch failure", r)
	}
	if got := res.Meta.Servers["dies"].Stderr; !slices.Contains(got, "launch-said-this") {
		t.Errorf("launch stderr meta %q", got)
	}
}

func TestRunInterrupted(t *testing.T) {
	var active, peak atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	o := fakeOptions(&active, &peak, 1)
	o.Progress = func(ev Event) {
		if ev.Kind == EventDone {
			cancel()
		}
	}
	_, err := Run(ctx, parseFake(t), o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestAggregateWeightings(t *testing.T) {
	// One big server with no schemas and one small server whose single tool
	// is enforceable: pooled tools say 1/11 enforceable, servers say 1/2.
	row := func(name string, kinds ...string) Row {
		r := Row{Name: name, Status: StatusScanned, Protocol: &scan.Protocol{Revision: "2025-06-18", Transport: "stdio"}}
		for i, k := range kinds {
			r.Tools = append(r.Tools, scan.ToolReport{Name: fmt.Sprint(i), OutputContract: scan.Contract(k)})
		}
		sc := scan.Scores{}
		r.Scores = &sc
		return r
	}
	big := row("big", slices.Repeat([]string{"none"}, 10)...)
	small := row("small", "enforceable")
	failed := Row{Name: "f", Status: StatusFailed, Failure: FailLaunch}
	a := Aggregate([]Row{small, failed, big})
	if a.Servers != 3 || a.Scanned != 2 || a.Failed != 1 || a.Failures[FailLaunch] != 1 {
		t.Fatalf("counts %+v", a)
	}
	if got := *a.ToolWeighted.EnforceableShare; got != 1.0/11 {
		t.Fatalf("tool-weighted enforceable %v", got)
	}
	if got := *a.ServerWeighted.EnforceableShare; got != 0.5 {
		t.Fatalf("server-weighted enforceable %v", got)
	}
	if a.ServerWeighted.WithoutSchemas != 1 || a.ServerWeighted.WithEnforceable != 1 {
		t.Fatalf("server counts %+v", a.ServerWeighted)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(Aggregate([]Row{big, failed, small}))
	if !bytes.Equal(ja, jb) {
		t.Fatal("aggregates depend on row order")
	}
	empty := Aggregate(nil)
	if empty.ToolWeighted.NoneShare != nil || empty.ServerWeighted.ErrorHandling != nil {
		t.Fatal("empty aggregates must be null, not zero")
	}
}

// TestAggregateRejectsAny: partial is its own tier, and "rejects at least
// one" (enforceable + partial) is reported beside the strict figures, in
// both weightings.
func TestAggregateRejectsAny(t *testing.T) {
	row := func(name string, kinds ...string) Row {
		r := Row{Name: name, Status: StatusScanned, Protocol: &scan.Protocol{Revision: "2025-06-18", Transport: "stdio"}, Scores: &scan.Scores{}}
		for i, k := range kinds {
			r.Tools = append(r.Tools, scan.ToolReport{Name: fmt.Sprint(i), OutputContract: scan.Contract(k)})
		}
		return r
	}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name                         string
		rows                         []Row
		partial, withPartial         int
		twPart, twAny, twAnyD, twEoD *float64
		swPart, swAny, swAnyD        *float64
	}{
		{"partial beside vacuous and enforceable", []Row{row("a", "partial", "vacuous"), row("b", "enforceable", "none")}, 1, 1,
			f(0.25), f(0.5), f(2.0 / 3), f(1.0 / 3), f(0.25), f(0.5), f(0.75)},
		{"partial only", []Row{row("a", "partial", "partial")}, 2, 1,
			f(1), f(1), f(1), f(0), f(1), f(1), f(1)},
		{"no schema declared", []Row{row("a", "none")}, 0, 0,
			f(0), f(0), nil, nil, f(0), f(0), nil},
	}
	// Shares are exact (rounded only when rendered): compared to 1e-12.
	eq := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || math.Abs(*a-*b) < 1e-12) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Aggregate(tt.rows)
			tw, sw := a.ToolWeighted, a.ServerWeighted
			if tw.Partial != tt.partial || sw.WithPartial != tt.withPartial {
				t.Errorf("partial %d, with_partial %d", tw.Partial, sw.WithPartial)
			}
			for _, c := range []struct {
				name      string
				got, want *float64
			}{
				{"tool-weighted partial_share", tw.PartialShare, tt.twPart}, {"tool-weighted rejects_any_share", tw.RejectsAnyShare, tt.twAny},
				{"tool-weighted rejects_any_of_declared", tw.RejectsAnyOfDeclared, tt.twAnyD}, {"tool-weighted enforceable_of_declared", tw.EnforceableOfDeclared, tt.twEoD},
				{"server-weighted partial_share", sw.PartialShare, tt.swPart}, {"server-weighted rejects_any_share", sw.RejectsAnyShare, tt.swAny},
				{"server-weighted rejects_any_of_declared", sw.RejectsAnyOfDeclared, tt.swAnyD},
			} {
				if !eq(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.name, fmtShare(c.got), fmtShare(c.want))
				}
			}
		})
	}
}

func fmtShare(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func TestCleaner(t *testing.T) {
	dir := t.TempDir()
	cl := cleaner(Vars{SpecDir: "/a/spec", WorkDir: filepath.Join(dir, "w"), Port: "4242"})
	in := "exec /a/spec/node_modules/.bin/x in " + filepath.Join(dir, "w") + "/sub at http://127.0.0.1:4242/mcp"
	want := "exec ${SPEC_DIR}/node_modules/.bin/x in ${WORK_DIR}/sub at http://127.0.0.1:${PORT}/mcp"
	if got := cl(in); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// A log line's time stamp and process id change from run to run.
	for in, want := range map[string]string{
		"2026/12/04 05:02:02 This example demonstrates": "<time> This example demonstrates",
		"[DEBUG 2026-12-04T05:00:02.588Z] Uncaught":     "[DEBUG <time>] Uncaught",
		"05:00:00 ERROR: No .env file found":            "<time> ERROR: No .env file found",
		"[4329] Usage: mcp-remote <https://server-url>": "[pid] Usage: mcp-remote <https://server-url>",
		"arguments[0] is required, version 1.2.3":       "arguments[0] is required, version 1.2.3",
		// The scan cut a quoted stderr line in the middle of a path.
		`imported from /a/sp…"`: `imported from ${SPEC_DIR}…"`,
	} {
		if got := cl(in); got != want {
			t.Errorf("cl(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFakeStudyDocument: the fake study's results.json, its meta fixed,
// is testdata/fake-results.json, the document the pages' tests
// (studies/pages) render; go test -update writes it anew.
func TestFakeStudyDocument(t *testing.T) {
	var active, peak atomic.Int32
	res, err := Run(context.Background(), parseFake(t), fakeOptions(&active, &peak, 4))
	if err != nil {
		t.Fatal(err)
	}
	res.Meta = Meta{ToolVersion: "test", StartedAt: "2026-01-02T03:04:05Z", DurationMS: 1500}
	var b bytes.Buffer
	if err := Write(&b, res); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "fake-results.json", b.Bytes())
}

// TestAggregatesAreSumsOfRowTallies: every pooled figure of the aggregates
// is the sum of the counted rows' tallies (scan.Tally), per SDK and
// framework too, and the server-weighted shares are the mean of the rows'
// own; a figure is computed once, from counts.
func TestAggregatesAreSumsOfRowTallies(t *testing.T) {
	var active, peak atomic.Int32
	res, err := Run(context.Background(), parseFake(t), fakeOptions(&active, &peak, 4))
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, res)
}

// checkSums asserts that res's aggregates are the sums of its rows'
// tallies.
func checkSums(t *testing.T, res *Results) {
	t.Helper()
	a := Aggregate(res.Servers)
	var all scan.Tally
	bySDK := map[string]scan.Tally{}
	var shares []scan.Shares
	counted := 0
	for _, r := range res.Servers {
		if !r.Counted() {
			continue
		}
		counted++
		tl := r.Tally()
		all.Add(tl)
		g := bySDK[r.ObservedSDK()]
		g.Add(tl)
		bySDK[r.ObservedSDK()] = g
		shares = append(shares, tl.Shares())
	}
	if a.Counted != counted || a.ToolWeighted.Tally != all || !reflect.DeepEqual(a.ToolWeighted.Shares, all.Shares()) {
		t.Errorf("tool-weighted %+v, the rows' tallies add up to %+v over %d rows", a.ToolWeighted, all, counted)
	}
	for k, g := range bySDK {
		if a.BySDK[k].Tally != g {
			t.Errorf("by SDK %s: %+v, the rows add up to %+v", k, a.BySDK[k].Tally, g)
		}
	}
	if len(a.BySDK) != len(bySDK) {
		t.Errorf("%d SDK groups, the rows have %d", len(a.BySDK), len(bySDK))
	}
	if all.Tools == 0 {
		t.Fatal("no tools counted: the check checks nothing")
	}
	if !reflect.DeepEqual(a.ServerWeighted.Shares, scan.MeanShares(shares)) {
		t.Errorf("server-weighted %+v, the mean of the rows' shares is %+v", a.ServerWeighted.Shares, scan.MeanShares(shares))
	}
}
