package pages

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/internal/strwalk"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
	"github.com/mcpdrill/mcpdrill/studies"
)

// HTML writes the self-contained scoreboard page: a table with one row per
// server, sorted by clicking a header or by a "#sort=KEY:asc|desc"
// fragment and filtered by the text in its filter box (or a
// "#filter=TEXT" fragment), each row opening (a <details>, no script
// needed) onto the server's findings, probe verdicts, output contracts,
// conformance checks not passed and, for a failure, its reason; then one
// inline-SVG bar chart per axis. It loads nothing from outside. Only its
// run line (tool version, date, duration) and the stderr tails of failed
// rows come from Meta; everything else is a function of the document
// outside it, as Markdown is.
//
// What servers, registries and servers.json say is made safe first
// (safetext.Block: no control or bidirectional character reaches the page;
// the template escapes HTML): the page is built from a copy of the results
// whose every string is, and the chart labels made of aggregate keys are.
func HTML(w io.Writer, r *studies.Results) error {
	safe, err := safeCopy(r)
	if err != nil {
		return fmt.Errorf("writing scoreboard: %w", err)
	}
	p := buildPage(safe)
	for _, v := range []any{&p.Charts, &p.Tiers, &p.GroupTiers} {
		strwalk.Map(v, pageText)
	}
	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("writing scoreboard: %w", err)
	}
	return nil
}

// safeCopy is a deep copy of r (its JSON fields) with every string made
// safe to show (pageText).
func safeCopy(r *studies.Results) (*studies.Results, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var c studies.Results
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	strwalk.Map(&c, pageText)
	return &c, nil
}

// pageText is text as the page shows it: colour and cursor sequences (a
// server's stderr is full of them) removed, then made safe
// (safetext.Block).
func pageText(s string) string {
	return safetext.Block(terminalEscape.ReplaceAllString(s, ""))
}

type page struct {
	R       *studies.Results
	A       studies.Aggregates
	Run     runLine
	Columns []column
	Rows    []pageRow
	Charts  []chart
	Tiers   []tierBar
	// GroupTiers are the tier bars per observed SDK and per framework.
	GroupTiers []tierChart
	// Drift are the version pairs, semver violations first.
	Drift []pageDrift
	// NotCompared are the version pairs not compared (folded).
	NotCompared []pageDrift
	// Outcomes are the rows by outcome, with what each means.
	Outcomes []outcomeRow
	// Seed is the seed comparison's rows.
	Seed [][4]string
}

// tierChart is one stacked-bar chart of tiers, a bar per group.
type tierChart struct {
	Key, Title string
	Height     int
	Bars       []tierBar
}

// pageDrift is one version pair on the page.
type pageDrift struct {
	// Compared pairs come first; the others are folded.
	Compared                                                       bool
	Name, From, To, Step, Summary, Removed, Unlisted, Descriptions string
	Violation                                                      bool
	Changes                                                        []studies.VersionChange
}

// runLine is what the page says of the run, from Meta.
type runLine struct {
	ToolVersion, Date, Duration, Population string
}

type column struct {
	Key, Label, Type, Title string
}

type cell struct {
	Text  string
	Value string
	Class string
}

type pageRow struct {
	Name   string
	Status string
	Cells  []cell
	Reason string
	// The drill-down: Summary is the line that opens it.
	Summary  string
	Findings []pageFinding
	// ByRule counts findings per rule when the document has no
	// finding_details (written before them).
	ByRule []ruleCount
	Probes []pageProbe
	Tools  []pageTool
	// Checks are the conformance checks that did not pass (failed, not
	// established, not applicable), ChecksPassed counts the others.
	Checks       []scan.Check
	ChecksPassed int
	Stderr       string
	// SDK is the observed SDK's evidence; Drift the row's version pair.
	SDK   *studies.SDKObserved
	Drift *studies.VersionDrift
}

type pageFinding struct {
	Severity, Rule, Title, Tool, Text string
}

type ruleCount struct {
	Rule, Title string
	Count       int
}

type pageProbe struct {
	Name, Verdict, Code, Expected, Conformant string
}

type pageTool struct {
	Name, Contract, Leaf, Reason string
	// Providers are the tool's provider verdicts (providers.go).
	Providers []pageVerdict
}

type chart struct {
	Key, Title, Note string
	Height           int
	Bars             []bar
}

type bar struct {
	Label string
	Y     int
	W     float64
	Text  string
}

type tierBar struct {
	Label    string
	Y        int
	Segments []segment
	// Caption gives every share of the bar in numbers, under it: a slice
	// too thin to see still has its figure.
	Caption string
}

type segment struct {
	X, W  float64
	Class string
	Title string
}

var columns = []column{
	{"server", "server", "str", "name in servers.json"},
	{"sdk", "SDK", "str", "SDK / framework observed (else the label declared in servers.json)"},
	{"status", "status", "str", "scanned, or why not"},
	{"revision", "revision", "str", "negotiated protocol revision and transport"},
	{"tools", "tools", "num", "tools listed"},
	{"none", "no schema", "num", "share of tools without an outputSchema"},
	{"vacuous", "vacuous", "num", "share of tools whose outputSchema rejects the corrupted payload of no sampled shape (or was not shown to reject one)"},
	{"partial", "partial", "num", "share of tools whose outputSchema rejects the corrupted payload of some sampled shapes, not all"},
	{"enforceable", "enforceable", "num", "share of tools whose outputSchema rejects the corrupted payload of every sampled shape"},
	{"leaf", "leaf rate", "num", "mean share of single-leaf corruptions rejected"},
	{"errors", "error handling", "num", "share of probes refused visibly"},
	{"errconf", "error conformance", "num", "share of probes answered as the revision asks"},
	{"spec", "spec conformance", "num", "share of decided conformance checks passed"},
}

func numCell(p *float64) cell {
	if p == nil {
		return cell{Text: "–", Value: "-1", Class: "na"}
	}
	return cell{Text: pct(p), Value: strconv.FormatFloat(*p, 'f', 4, 64)}
}

func buildPage(r *studies.Results) page {
	p := page{R: r, A: r.Aggregates, Columns: columns, Run: runOf(r.Meta)}
	rules := slices.Concat(scan.Catalogue(), studies.Catalogue())
	for _, row := range r.Servers {
		none, vac, part, enf, _ := tiers(row)
		n := len(row.Tools)
		rev := ""
		if row.Protocol != nil {
			rev = row.Protocol.Revision + " " + row.Protocol.Transport
		}
		status := row.Status
		if row.Failure != "" {
			status = row.Failure
		}
		pr := drillDown(row, rules, r.Meta.Servers[row.Name])
		pr.Cells = append(pr.Cells,
			cell{Text: row.Name, Value: row.Name},
			cell{Text: sdkCell(row), Value: sdkCell(row)},
			cell{Text: status, Value: status, Class: "st-" + row.Status},
			cell{Text: orDash(rev), Value: rev},
		)
		if row.Status != studies.StatusScanned {
			pr.Cells = append(pr.Cells, cell{Text: "–", Value: "-1", Class: "na"})
			for range 8 {
				pr.Cells = append(pr.Cells, numCell(nil))
			}
			p.Rows = append(p.Rows, pr)
			continue
		}
		pr.Cells = append(pr.Cells, cell{Text: strconv.Itoa(n), Value: strconv.Itoa(n)},
			numCell(scan.Share(none, n)), numCell(scan.Share(vac, n)), numCell(scan.Share(part, n)), numCell(scan.Share(enf, n)))
		var sc = row.Scores
		if sc == nil {
			for range 4 {
				pr.Cells = append(pr.Cells, numCell(nil))
			}
		} else {
			sh := row.Tally().Shares()
			pr.Cells = append(pr.Cells, numCell(sh.LeafRate), numCell(sh.ErrorHandling), numCell(sh.ErrorConformance), numCell(sh.SpecConformance))
		}
		p.Rows = append(p.Rows, pr)
	}

	axes := []struct {
		key, title, note string
		get              func(studies.Row) *float64
	}{
		{"coverage", "Output schema coverage", "share of tools that declare an outputSchema", func(r studies.Row) *float64 { return r.Tally().Shares().OutputCoverage }},
		{"enforceable", "Enforceable rate", "share of tools whose outputSchema rejects the corrupted payload of every sampled shape", func(r studies.Row) *float64 { return r.Tally().Shares().EnforceableShare }},
		{"leaf", "Leaf rate", "mean share of single-leaf corruptions rejected, over assessed schemas", func(r studies.Row) *float64 { return r.Tally().Shares().LeafRate }},
		{"errors", "Error handling", "share of probes refused visibly", func(r studies.Row) *float64 { return r.Tally().Shares().ErrorHandling }},
		{"errconf", "Error conformance", "share of probes answered as the negotiated revision asks", func(r studies.Row) *float64 { return r.Tally().Shares().ErrorConformance }},
		{"spec", "Specification conformance", "share of decided conformance checks passed", func(r studies.Row) *float64 { return r.Tally().Shares().SpecConformance }},
	}
	for _, ax := range axes {
		type pt struct {
			name string
			v    float64
		}
		var pts []pt
		// Over the counted servers only (Row.Counted): a transport variant
		// or a previous release would count a package twice.
		for _, row := range r.Servers {
			if !row.Counted() || row.Scores == nil {
				continue
			}
			if v := ax.get(row); v != nil {
				pts = append(pts, pt{row.Name, *v})
			}
		}
		slices.SortFunc(pts, func(a, b pt) int {
			if c := cmp.Compare(b.v, a.v); c != 0 {
				return c
			}
			return cmp.Compare(a.name, b.name)
		})
		c := chart{Key: ax.key, Title: ax.title, Note: ax.note, Height: 20*len(pts) + 4}
		for i, q := range pts {
			v := q.v
			c.Bars = append(c.Bars, bar{Label: q.name, Y: 20*i + 2, W: 300 * v, Text: pct(&v)})
		}
		p.Charts = append(p.Charts, c)
	}

	tw, sw := r.Aggregates.ToolWeighted, r.Aggregates.ServerWeighted
	mk := tierBarOf
	p.Tiers = []tierBar{
		mk(fmt.Sprintf("tool-weighted (%d tools)", tw.Tools), 2, tw.NoneShare, tw.VacuousShare, tw.PartialShare, tw.EnforceableShare, tw.InvalidShare),
		mk(fmt.Sprintf("server-weighted (%d servers)", sw.Servers), 44, sw.NoneShare, sw.VacuousShare, sw.PartialShare, sw.EnforceableShare, sw.InvalidShare),
	}
	for _, g := range []struct {
		key, title string
		m          map[string]studies.Figures
	}{{"sdk", "per SDK (observed, else declared)", r.Aggregates.BySDK}, {"framework", "per framework", r.Aggregates.ByFramework}} {
		tc := tierChart{Key: g.key, Title: g.title}
		for i, k := range slices.Sorted(maps.Keys(g.m)) {
			f := g.m[k]
			tc.Bars = append(tc.Bars, mk(fmt.Sprintf("%s (%s, %s)", k, plural(f.Servers, "server"), plural(f.Tools, "tool")), 44*i+2, f.NoneShare, f.VacuousShare, f.PartialShare, f.EnforceableShare, f.InvalidShare))
		}
		tc.Height = 44*len(tc.Bars) + 4
		p.GroupTiers = append(p.GroupTiers, tc)
	}
	compared, notCompared := driftRows(r.Servers)
	for _, row := range slices.Concat(compared, notCompared) {
		vd := row.VersionDrift
		pd := pageDrift{Compared: vd.Compared, Name: row.Name, From: orDash(vd.From), To: orDash(vd.To), Step: vd.Step, Summary: driftSummary(vd),
			Removed: orNone(vd.ToolsRemoved), Unlisted: orNone(vd.ToolsUnlisted), Descriptions: orNone(vd.DescriptionsChanged), Violation: vd.SemverViolation, Changes: vd.Changes}
		if vd.Compared {
			p.Drift = append(p.Drift, pd)
		} else {
			p.NotCompared = append(p.NotCompared, pd)
		}
	}
	a := r.Aggregates
	p.Outcomes = outcomeTable(a)
	p.Seed = [][4]string{
		{"no outputSchema", ratio(seed.None, seed.Tools), ratio(tw.None, tw.Tools), pct(sw.NoneShare)},
		{"vacuous", ratio(seed.Vacuous, seed.Tools), ratio(tw.Vacuous, tw.Tools), pct(sw.VacuousShare)},
		{"enforceable (seed: its one payload; here: rejects at least one)", ratio(seed.Enforceable, seed.Tools), ratio(tw.Enforceable+tw.Partial, tw.Tools), pct(sw.RejectsAnyShare)},
		{"partial", "–", ratio(tw.Partial, tw.Tools), pct(sw.PartialShare)},
		{"SDK-wrapped tools", fmt.Sprintf("%d (Python FastMCP)", seed.Wrapped), strconv.Itoa(tw.Wrapped), "–"},
		{"handle the seed's 3 error probes", fmt.Sprintf("%d/%d", seed.Handled, seed.Servers), fmt.Sprintf("%d/%d", a.SeedProbes.Handled, a.SeedProbes.Measured), "–"},
	}
	return p
}

// tierBarOf is one stacked bar of tier shares.
func tierBarOf(label string, y int, none, vac, part, enf, inv *float64) tierBar {
	tb := tierBar{Label: label, Y: y}
	var caption []string
	x := 0.0
	for _, s := range []struct {
		v     *float64
		class string
		name  string
	}{{none, "t-none", "no schema"}, {vac, "t-vac", "vacuous"}, {part, "t-part", "partial"}, {enf, "t-enf", "enforceable"}, {inv, "t-inv", "invalid"}} {
		if s.v != nil {
			caption = append(caption, s.name+" "+pct(s.v))
		}
		if s.v == nil || *s.v == 0 {
			continue
		}
		w := 500 * *s.v
		tb.Segments = append(tb.Segments, segment{X: 210 + x, W: w, Class: s.class, Title: s.name + " " + pct(s.v)})
		x += w
	}
	tb.Caption = strings.Join(caption, " · ")
	return tb
}

// runOf is the run line: the tool version, the start date (UTC, to the
// minute) and the duration, each "not recorded" when Meta lacks it.
func runOf(m studies.Meta) runLine {
	rl := runLine{ToolVersion: m.ToolVersion, Date: "not recorded", Duration: "not recorded", Population: cmp.Or(m.Population, "not recorded")}
	if rl.ToolVersion == "" {
		rl.ToolVersion = "not recorded"
	}
	if t, err := time.Parse(time.RFC3339, m.StartedAt); err == nil {
		rl.Date = t.UTC().Format("2006-01-02 15:04 UTC")
	}
	if m.DurationMS > 0 {
		rl.Duration = (time.Duration(m.DurationMS) * time.Millisecond).Round(time.Second).String()
	}
	return rl
}

// drillDown is a row's identity and what its <details> shows.
func drillDown(row studies.Row, rules report.Catalogue, sm studies.ServerMeta) pageRow {
	pr := pageRow{Name: row.Name, Status: row.Status, Reason: row.Reason, SDK: row.SDKObserved, Drift: row.VersionDrift}
	title := func(id string) string {
		if r, ok := rules.Lookup(id); ok {
			return r.Title
		}
		return ""
	}
	sev := map[report.Severity]int{}
	for _, f := range row.FindingDetails {
		sev[f.Severity]++
		pr.Findings = append(pr.Findings, pageFinding{Severity: string(f.Severity), Rule: f.Rule, Title: title(f.Rule), Tool: f.Tool, Text: f.Text()})
	}
	total := len(row.FindingDetails)
	if total == 0 {
		for _, id := range slices.Sorted(maps.Keys(row.Findings)) {
			pr.ByRule = append(pr.ByRule, ruleCount{Rule: id, Title: title(id), Count: row.Findings[id]})
			total += row.Findings[id]
		}
	}
	ran, off := 0, 0
	for _, p := range row.Probes {
		pp := pageProbe{Name: p.Name, Verdict: string(p.Verdict), Expected: p.Expected, Conformant: "skipped"}
		var code []string
		if p.ErrorCode != nil {
			code = append(code, strconv.Itoa(*p.ErrorCode))
		}
		if p.HTTPStatus != 0 {
			code = append(code, "HTTP "+strconv.Itoa(p.HTTPStatus))
		}
		pp.Code = strings.Join(code, " ")
		if p.Conformant != nil {
			ran++
			pp.Conformant = "yes"
			if !*p.Conformant {
				off++
				pp.Conformant = "no"
			}
		}
		pr.Probes = append(pr.Probes, pp)
	}
	for _, t := range row.Tools {
		pt := pageTool{Name: t.Name, Contract: string(t.OutputContract), Leaf: "–", Reason: t.Reason, Providers: pageVerdicts(t.Providers)}
		if t.LeafRate != nil && t.Leaves > 0 {
			pt.Leaf = fmt.Sprintf("%d/%d", t.LeavesRejected, t.Leaves)
		}
		pr.Tools = append(pr.Tools, pt)
	}
	failed := 0
	for _, c := range row.Conformance {
		switch c.Status {
		case scan.CheckPass:
			pr.ChecksPassed++
			continue
		case scan.CheckFail:
			failed++
		}
		pr.Checks = append(pr.Checks, c)
	}
	if row.Status == studies.StatusFailed && len(sm.Stderr) > 0 {
		pr.Stderr = strings.Join(sm.Stderr, "\n")
	}

	switch row.Status {
	case studies.StatusScanned:
		parts := []string{plural(total, "finding")}
		if len(row.FindingDetails) > 0 {
			parts[0] += fmt.Sprintf(" (%d error, %d warn, %d info)", sev[report.SeverityError], sev[report.SeverityWarn], sev[report.SeverityInfo])
		}
		if ran > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d probes not conformant", off, ran))
		}
		if failed > 0 {
			parts = append(parts, plural(failed, "conformance check")+" failed")
		}
		pr.Summary = strings.Join(parts, " · ")
	case studies.StatusFailed:
		pr.Summary = "failed (" + row.Failure + "): " + row.Reason
	default:
		pr.Summary = row.Status + ": " + row.Reason
	}
	return pr
}

// terminalEscape matches a colour or cursor sequence in a server's stderr.
var terminalEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct":          pct,
	"f1":           func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"add":          func(a, b int) int { return a + b },
	"driftSummary": driftSummary,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcpdrill study scoreboard</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1b1f24;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#57606a;margin:0 0 16px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;border-bottom:1px solid #d0d7de;text-align:left;vertical-align:top;overflow-wrap:break-word}
#scoreboard>thead th{cursor:pointer;user-select:none;background:#f6f8fa;position:sticky;top:0;z-index:1}
#scoreboard>thead th[aria-sort=ascending]::after{content:" ▲"}#scoreboard>thead th[aria-sort=descending]::after{content:" ▼"}
td.num,th.num{text-align:right}td.num{white-space:nowrap}td.na{color:#8c959f}
.st-failed{color:#cf222e}.st-skipped{color:#8c959f}
#scoreboard>tbody>tr.srv>td{border-bottom:none}
#scoreboard>tbody>tr.more>td{padding:0 8px 6px}
#scoreboard>tbody>tr.more>td>details{width:0;min-width:100%}
summary{cursor:pointer;color:#57606a;font-size:13px}
details[open]>summary{margin-bottom:6px}
.drill{padding:0 0 4px 16px;font-size:13px}
.drill h4{font-size:13px;margin:10px 0 4px}
.drill table{width:auto;max-width:100%}
.drill th{background:#f6f8fa;font-weight:600}
.drill th,.drill td{padding:2px 8px}.drill td.msg{overflow-wrap:anywhere}
ul.evidence{margin:2px 0;padding-left:18px}
.drill pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:6px 8px;margin:4px 0;font-size:12px}
.sev-error{color:#cf222e;font-weight:600}.sev-warn{color:#9a6700}.sev-info{color:#57606a}
.cf-no{color:#cf222e}.cf-skipped{color:#8c959f}
.filter{margin:0 0 8px}.filter input{font:inherit;padding:3px 6px;width:24em;max-width:100%}
.charts{display:flex;flex-wrap:wrap;gap:24px}
.chart{flex:0 0 auto}.chart p{margin:0 0 4px;color:#57606a;font-size:12px}
svg text{font-size:11px;fill:#1b1f24}svg text.cap{fill:#57606a}
rect.bar{fill:#0969da}rect.bg{fill:#eaeef2}
.t-none{fill:#afb8c1}.t-vac{fill:#d4a72c}.t-part{fill:#8fbf6a}.t-enf{fill:#1a7f37}.t-inv{fill:#cf222e}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
dl.kv{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dl.kv dt{color:#57606a}dl.kv dd{margin:0}
</style>
</head>
<body>
<h1>mcpdrill study scoreboard</h1>
<p class="sub">{{.A.Servers}} servers listed · {{.A.Scanned}} scanned · {{.A.Failed}} failed · {{.A.Skipped}} skipped · servers.json <code>{{.R.SpecHash}}</code>{{if .R.Shard}} · shard {{.R.Shard.Index}}/{{.R.Shard.Count}}{{end}}</p>
<p class="sub" id="run">mcpdrill <code>{{.Run.ToolVersion}}</code> · run {{.Run.Date}} · took {{.Run.Duration}} · population: {{.Run.Population}}</p>

{{if .Outcomes}}<h2>Outcomes</h2>
<table id="outcomes"><thead><tr><th>outcome</th><th class="num">rows</th><th>what it means</th></tr></thead><tbody>
{{range .Outcomes}}<tr><td>{{.Outcome}}</td><td class="num">{{.Rows}}</td><td>{{.Meaning}}</td></tr>
{{end}}</tbody></table>{{end}}

<h2>Output-contract tiers</h2>
<p class="sub">Each tool with an outputSchema is sent corrupted payloads of the shapes its schema allows: <b>no schema</b>, it declares none; <b>vacuous</b>, its schema rejects none of them; <b>partial</b>, it rejects those of some sampled shapes; <b>enforceable</b>, of every sampled shape; <b>invalid</b>, the schema does not compile. Error probes: <b>handled</b> is refused visibly (JSON-RPC error, isError, HTTP error); <b>conformant</b> is answered as the negotiated revision asks.</p>
<div class="legend"><span><i style="background:#afb8c1"></i>no schema</span><span><i style="background:#d4a72c"></i>vacuous</span><span><i style="background:#8fbf6a"></i>partial</span><span><i style="background:#1a7f37"></i>enforceable</span><span><i style="background:#cf222e"></i>invalid</span></div>
<svg id="tiers" role="img" aria-label="output-contract tiers" width="720" height="90" viewBox="0 0 720 90">
{{range .Tiers}}<text x="0" y="{{add .Y 15}}">{{.Label}}</text><rect class="bg" x="210" y="{{.Y}}" width="500" height="22"></rect>{{$y := .Y}}{{range .Segments}}<rect class="{{.Class}}" x="{{f1 .X}}" y="{{$y}}" width="{{f1 .W}}" height="22"><title>{{.Title}}</title></rect>{{end}}<text class="cap" x="210" y="{{add .Y 36}}">{{.Caption}}</text>
{{end}}</svg>
<dl class="kv">
<dt>tool-weighted</dt><dd>no schema {{pct .A.ToolWeighted.NoneShare}} · vacuous {{pct .A.ToolWeighted.VacuousShare}} · partial {{pct .A.ToolWeighted.PartialShare}} · enforceable {{pct .A.ToolWeighted.EnforceableShare}} · invalid {{pct .A.ToolWeighted.InvalidShare}} · rejects at least one {{pct .A.ToolWeighted.RejectsAnyShare}}</dd>
<dt>server-weighted</dt><dd>no schema {{pct .A.ServerWeighted.NoneShare}} · vacuous {{pct .A.ServerWeighted.VacuousShare}} · partial {{pct .A.ServerWeighted.PartialShare}} · enforceable {{pct .A.ServerWeighted.EnforceableShare}} · invalid {{pct .A.ServerWeighted.InvalidShare}} · rejects at least one {{pct .A.ServerWeighted.RejectsAnyShare}}</dd>
<dt>errors</dt><dd>{{.A.ServerWeighted.AllErrorsHandled}}/{{.A.ServerWeighted.ErrorsMeasured}} servers refused every probe visibly · {{.A.ServerWeighted.AllErrorsConformant}}/{{.A.ServerWeighted.ErrorsMeasured}} answered every probe as their revision asks</dd>
</dl>

<h2>Beside the seed study</h2>
<table class="seed"><thead><tr><th>figure</th><th>seed (31 servers, 265 tools)</th><th>this run, tool-weighted</th><th>this run, server-weighted</th></tr></thead><tbody>
{{range .Seed}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>

<h2>Tiers by SDK and framework</h2>
{{range .GroupTiers}}<h3>{{.Title}}</h3>
<svg class="group-tiers" data-group="{{.Key}}" role="img" aria-label="output-contract tiers {{.Title}}" width="720" height="{{.Height}}" viewBox="0 0 720 {{.Height}}">
{{range .Bars}}<text x="0" y="{{add .Y 15}}">{{.Label}}</text><rect class="bg" x="210" y="{{.Y}}" width="500" height="22"></rect>{{$y := .Y}}{{range .Segments}}<rect class="{{.Class}}" x="{{f1 .X}}" y="{{$y}}" width="{{f1 .W}}" height="22"><title>{{.Title}}</title></rect>{{end}}<text class="cap" x="210" y="{{add .Y 36}}">{{.Caption}}</text>
{{end}}</svg>
{{end}}
{{- if or .Drift .NotCompared}}
<h2>Version drift</h2>
<p class="sub">{{.A.VersionDrift.Pairs}} pairs listed (a release and the one before it) · {{.A.VersionDrift.BothScanned}} scanned at both releases · {{.A.VersionDrift.NeitherScanned}} at neither · {{.A.VersionDrift.Compared}} compared (both listings whole) · {{.A.VersionDrift.WithBreaking}} shipped a breaking change · {{.A.VersionDrift.SemverViolations}} of them in a minor or patch step of semantic versions · {{.A.VersionDrift.WithUndetermined}} with changes not decided · {{.A.VersionDrift.ToolsRemoved}} tools removed · {{.A.VersionDrift.ToolsUnlisted}} no longer listed by default · {{.A.VersionDrift.DescriptionsChanged}} descriptions changed</p>
<table id="drift"><thead><tr><th>package</th><th>from → to</th><th>step</th><th>changes</th><th>tools removed</th><th>no longer listed by default</th><th>descriptions changed</th><th>semver violation</th></tr></thead>
{{range .Drift}}<tbody><tr data-pair="{{.Name}}"><td>{{.Name}}</td><td>{{.From}} → {{.To}}</td><td>{{.Step}}</td><td>{{if .Changes}}<details class="changes"><summary>{{.Summary}}</summary><table class="changes"><thead><tr><th>severity</th><th>rule</th><th>tool</th><th>pointer</th><th>message</th></tr></thead><tbody>
{{range .Changes}}<tr><td class="sev-{{.Severity}}">{{.Severity}}</td><td>{{.Rule}}</td><td>{{.Tool}}</td><td>{{.Pointer}}</td><td class="msg">{{.Message}}</td></tr>
{{end}}</tbody></table></details>{{else}}{{.Summary}}{{end}}</td><td>{{.Removed}}</td><td>{{.Unlisted}}</td><td>{{.Descriptions}}</td><td{{if .Violation}} class="sev-error"{{end}}>{{if .Violation}}yes{{else}}no{{end}}</td></tr></tbody>
{{end}}</table>
{{if .NotCompared}}<details id="drift-not-compared"><summary>{{len .NotCompared}} pairs not compared</summary><table class="changes"><thead><tr><th>package</th><th>from → to</th><th>why not</th></tr></thead><tbody>
{{range .NotCompared}}<tr data-pair="{{.Name}}"><td>{{.Name}}</td><td>{{.From}} → {{.To}}</td><td class="msg">{{.Summary}}</td></tr>
{{end}}</tbody></table></details>{{end}}
{{- end}}

<h2>Servers</h2>
<p class="filter"><label>Filter <input type="search" id="filter" placeholder="server, SDK, status, rule id, tool, message" autocomplete="off"></label> <span id="shown"></span></p>
<table id="scoreboard">
<thead><tr>{{range .Columns}}<th data-key="{{.Key}}" data-type="{{.Type}}" title="{{.Title}}"{{if eq .Type "num"}} class="num"{{end}}>{{.Label}}</th>{{end}}</tr></thead>
{{range .Rows}}<tbody>
<tr data-server="{{.Name}}" class="srv" data-status="{{.Status}}"{{if .Reason}} title="{{.Reason}}"{{end}}>{{range $i, $c := .Cells}}<td data-v="{{$c.Value}}"{{if ge $i 4}} class="num{{if $c.Class}} {{$c.Class}}{{end}}"{{else if $c.Class}} class="{{$c.Class}}"{{end}}>{{$c.Text}}</td>{{end}}</tr>
<tr class="more"><td colspan="{{len $.Columns}}"><details><summary>{{.Summary}}</summary><div class="drill">
{{- if .Stderr}}
<p>The server's last stderr lines (this run):</p><pre>{{.Stderr}}</pre>{{end}}
{{- if .SDK}}
<h4>SDK evidence</h4>
<p>{{.SDK.Name}}{{if .SDK.Version}} {{.SDK.Version}}{{end}}{{if .SDK.Framework}} · framework {{.SDK.Framework}}{{end}}</p>
<ul class="evidence">{{range .SDK.Evidence}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{- if .Drift}}
<h4>Against the previous release</h4>
<p>{{.Drift.Previous}} {{.Drift.From}} → {{.Drift.To}} ({{.Drift.Step}}): {{driftSummary .Drift}}{{if .Drift.SemverViolation}} · <span class="sev-error">breaking change in a {{.Drift.Step}} step</span>{{end}}</p>{{end}}
{{- if .Findings}}
<h4>Findings</h4>
<table class="findings"><thead><tr><th>severity</th><th>rule</th><th>tool</th><th>message</th></tr></thead><tbody>
{{range .Findings}}<tr><td class="sev-{{.Severity}}">{{.Severity}}</td><td title="{{.Title}}">{{.Rule}}</td><td>{{.Tool}}</td><td class="msg">{{if .Text}}{{.Text}}{{else}}{{.Title}}{{end}}</td></tr>
{{end}}</tbody></table>
{{- else if .ByRule}}
<h4>Findings by rule</h4>
<table class="findings"><thead><tr><th>rule</th><th class="num">count</th><th>what it means</th></tr></thead><tbody>
{{range .ByRule}}<tr><td>{{.Rule}}</td><td class="num">{{.Count}}</td><td class="msg">{{.Title}}</td></tr>
{{end}}</tbody></table>
{{- end}}
{{- if .Probes}}
<h4>Error probes</h4>
<table class="probes"><thead><tr><th>probe</th><th>verdict</th><th>code</th><th>expected</th><th>conformant</th></tr></thead><tbody>
{{range .Probes}}<tr><td>{{.Name}}</td><td>{{.Verdict}}</td><td>{{.Code}}</td><td class="msg">{{.Expected}}</td><td class="cf-{{.Conformant}}">{{.Conformant}}</td></tr>
{{end}}</tbody></table>
{{- end}}
{{- if .Tools}}
<h4>Output contracts</h4>
<table class="tools"><thead><tr><th>tool</th><th>output contract</th><th>leaf rate</th><th>reason</th><th>providers</th></tr></thead><tbody>
{{range .Tools}}<tr><td>{{.Name}}</td><td>{{.Contract}}</td><td>{{.Leaf}}</td><td class="msg">{{.Reason}}</td><td class="msg">{{range $i, $v := .Providers}}{{if $i}} · {{end}}<span title="{{$v.Title}}">{{$v.Profile}} {{$v.Mark}}</span>{{end}}</td></tr>
{{end}}</tbody></table>
{{- end}}
{{- if or .Checks .ChecksPassed}}
<h4>Conformance checks</h4>
<p>{{.ChecksPassed}} passed{{if .Checks}}; the others:{{end}}</p>
{{- if .Checks}}
<table class="checks"><thead><tr><th>check</th><th>status</th><th>detail</th></tr></thead><tbody>
{{range .Checks}}<tr><td>{{.ID}}</td><td>{{.Status}}</td><td class="msg">{{.Detail}}{{if .Reason}} ({{.Reason}}){{end}}</td></tr>
{{end}}</tbody></table>
{{- end}}
{{- end}}
</div></details></td></tr>
</tbody>
{{end}}</table>

<h2>Per-axis charts</h2>
<div class="charts">
{{range .Charts}}<div class="chart"><h3>{{.Title}}</h3><p>{{.Note}}</p>
<svg class="axis" data-axis="{{.Key}}" role="img" aria-label="{{.Title}}" width="560" height="{{.Height}}" viewBox="0 0 560 {{.Height}}">
{{range .Bars}}<text x="0" y="{{add .Y 13}}">{{.Label}}</text><rect class="bg" x="200" y="{{.Y}}" width="300" height="16"></rect><rect class="bar" x="200" y="{{.Y}}" width="{{f1 .W}}" height="16"><title>{{.Label}} {{.Text}}</title></rect><text x="506" y="{{add .Y 13}}">{{.Text}}</text>
{{end}}</svg></div>
{{end}}</div>
<script>
(function () {
  var table = document.getElementById("scoreboard");
  var heads = table.tHead.rows[0].cells;
  // One <tbody> per server: its row, then the row of its <details>.
  var groups = Array.prototype.slice.call(table.tBodies);
  function sortBy(key, dir) {
    var col = -1;
    for (var i = 0; i < heads.length; i++) { if (heads[i].dataset.key === key) col = i; }
    if (col < 0) return;
    var num = heads[col].dataset.type === "num";
    var rows = groups.slice();
    rows.sort(function (a, b) {
      var x = a.rows[0].cells[col].dataset.v, y = b.rows[0].cells[col].dataset.v, c;
      if (num) { c = parseFloat(x) - parseFloat(y); } else { c = x < y ? -1 : (x > y ? 1 : 0); }
      if (dir === "desc") c = -c;
      if (c === 0) c = a.rows[0].dataset.server < b.rows[0].dataset.server ? -1 : 1;
      return c;
    });
    rows.forEach(function (g) { table.appendChild(g); });
    for (var j = 0; j < heads.length; j++) { heads[j].removeAttribute("aria-sort"); }
    heads[col].setAttribute("aria-sort", dir === "desc" ? "descending" : "ascending");
    table.dataset.sorted = key + ":" + dir;
  }
  Array.prototype.forEach.call(heads, function (th) {
    th.addEventListener("click", function () {
      var cur = table.dataset.sorted || "";
      var dir = cur === th.dataset.key + ":asc" ? "desc" : "asc";
      sortBy(th.dataset.key, dir);
    });
  });
  // The filter keeps the servers whose row or drill-down holds every word.
  var filter = document.getElementById("filter"), shown = document.getElementById("shown");
  function applyFilter() {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean), n = 0;
    groups.forEach(function (g) {
      var text = g.textContent.toLowerCase();
      var hit = words.every(function (w) { return text.indexOf(w) >= 0; });
      g.hidden = !hit;
      if (hit) n++;
    });
    shown.textContent = words.length ? n + " of " + groups.length + " servers" : "";
    table.dataset.shown = String(n);
  }
  filter.addEventListener("input", applyFilter);
  var m = /sort=([a-z]+):(asc|desc)/.exec(location.hash);
  if (m) { sortBy(m[1], m[2]); }
  var f = /filter=([^&]*)/.exec(location.hash);
  if (f) { filter.value = decodeURIComponent(f[1]); }
  applyFilter();
  document.documentElement.dataset.rows = String(groups.length);
})();
</script>
</body>
</html>
`))
