package pages

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/studies"
	"github.com/mcpdrill/mcpdrill/studies/versiondrift"
)

// fixture is the fake study's results (studies' TestFakeStudyDocument
// writes it from the fake scanner): deterministic outside Meta.
func fixture(t *testing.T) *studies.Results {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "fake-results.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := studies.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// enriched is the fixture with what the fake scanner cannot give: observed
// SDKs (one agreeing with its declared label, one not, one wrapping
// framework) and a previous release of zeta whose listing differs from
// zeta's in a removed tool and a changed description, graded as Run grades
// it.
func enriched(t *testing.T) *studies.Results {
	t.Helper()
	res := fixture(t)
	tools := func(raws ...string) []mcp.Tool {
		var out []mcp.Tool
		for _, raw := range raws {
			tl, err := drift.ParseTool([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tl)
		}
		return out
	}
	var zeta studies.Row
	for i := range res.Servers {
		r := &res.Servers[i]
		switch r.Name {
		case "zeta":
			r.SDKObserved = &studies.SDKObserved{Name: "typescript-sdk", Version: "1.20.1", Framework: "fastmcp-ts", Evidence: []string{
				"package.json of fastmcp@4.3.2: dependency @modelcontextprotocol/sdk ^1.24.3 (installed 1.20.1)",
				"package.json of zeta@1.0.0: dependency fastmcp 4.3.2 (installed 4.3.2)"}}
			r.Tools[0].Wrapped = true
			r.Package = "zeta@0.9.4"
			r.SetListing(tools(`{"name":"enforceable_0","description":"Look it up.","inputSchema":{"type":"object"}}`), true)
			zeta = *r
		case "alpha":
			r.SDKObserved = &studies.SDKObserved{Name: "mcp-go", Version: "v0.41.1", Evidence: []string{"Go build info: dependency github.com/mark3labs/mcp-go v0.41.1"}}
		}
	}
	prev := zeta
	prev.Name, prev.Package, prev.PreviousOf, prev.VersionDrift = "zeta-prev", "zeta@0.9.3", "zeta", nil
	prev.SetListing(tools(`{"name":"enforceable_0","description":"Look it up quickly.","inputSchema":{"type":"object"}}`,
		`{"name":"export","inputSchema":{"type":"object"}}`), true)
	for i := range res.Servers {
		if res.Servers[i].Name == "zeta" {
			vd := versiondrift.Pair(&prev, &res.Servers[i], "0.9.3", "0.9.4")
			res.Servers[i].VersionDrift = &vd
		}
	}
	res.Servers = append(res.Servers, prev)
	res.SpecServers++
	res.Finalize()
	return res
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	res := enriched(t)
	if err := Markdown(&b, res); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "summary.md", b.Bytes())
	// The enrichment reached the summary: its sections and their figures.
	for _, want := range []string{
		"| SDK-wrapped tools | 10 (Python FastMCP) | 1 | – |",
		"SDK-wrapped tools by framework: fastmcp-ts 1. No Python server was scanned in this run",
		"- **alpha**: declared go-sdk, observed mcp-go",
		"| zeta | 0.9.3 → 0.9.4 | minor | 2 changes (1 breaking): BRK-TOOL-DESCRIPTION-CHANGED 1, BRK-TOOL-REMOVED 1 | export | none | enforceable_0 | **yes** |",
		"1 scanned rows are previous releases of another row",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
}

// fixedMeta gives the fixture a run of its own: the page's run line is the
// only part of it (with failed rows' stderr) that reads Meta.
func fixedMeta(res *studies.Results) {
	res.Meta.ToolVersion, res.Meta.StartedAt, res.Meta.DurationMS = "test", "2026-01-02T03:04:05Z", 1500
}

func TestHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	res := enriched(t)
	fixedMeta(res)
	res.Meta.Population = "test servers, by hand"
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	testutil.Golden(t, "scoreboard.html.golden", b.Bytes())
	// Self-contained: nothing is loaded from anywhere.
	for _, bad := range []string{"src=", "href=", "@import", "url(", "<link", "<iframe"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page references an external asset (%q)", bad)
		}
	}
	if n := strings.Count(page, "<tr data-server="); n != len(res.Servers) {
		t.Errorf("%d table rows, want %d", n, len(res.Servers))
	}
	// Each row opens onto its drill-down, and the page says what run it is.
	if n := strings.Count(page, "<details><summary>"); n != len(res.Servers) {
		t.Errorf("%d drill-downs, want %d", n, len(res.Servers))
	}
	for _, want := range []string{
		`mcpdrill <code>test</code> · run 2026-01-02 03:04 UTC · took 2s · population: test servers, by hand`,
		// The SDK column, the evidence, the drift table and the pair in
		// the newer release's drill-down.
		`<td data-v="mcp-go (declared go-sdk)">mcp-go (declared go-sdk)</td>`,
		`<li>Go build info: dependency github.com/mark3labs/mcp-go v0.41.1</li>`,
		`<tr data-pair="zeta"><td>zeta</td><td>0.9.3 → 0.9.4</td><td>minor</td>`,
		`<td class="sev-error">error</td><td>BRK-TOOL-REMOVED</td><td>export</td>`,
		`zeta-prev 0.9.3 → 0.9.4 (minor): 2 changes (1 breaking): BRK-TOOL-DESCRIPTION-CHANGED 1, BRK-TOOL-REMOVED 1 · <span class="sev-error">breaking change in a minor step</span>`,
		"servers.json <code>" + res.SpecHash + "</code>",
		`<input type="search" id="filter"`,
		// mid's findings, a failure's reason, a probe verdict.
		`<td class="msg">/outputSchema: no outputSchema declared</td>`,
		`<summary>failed (unreachable): no MCP session could be opened`,
		`<td>unknown_tool</td><td>accepted</td><td></td><td class="msg">jsonrpc_error -32602</td><td class="cf-no">no</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<svg class="axis"`); n != 6 {
		t.Errorf("%d axis charts, want 6", n)
	}
	// One tier chart per SDK grouping, a bar per group.
	for key, want := range map[string]int{"sdk": len(res.Aggregates.BySDK), "framework": len(res.Aggregates.ByFramework)} {
		chart := regexp.MustCompile(`(?s)<svg class="group-tiers" data-group="` + key + `".*?</svg>`).FindString(page)
		if n := strings.Count(chart, `<rect class="bg"`); n != want || want < 2 {
			t.Errorf("%s tier chart: %d bars, want %d (at least 2)", key, n, want)
		}
	}
}

// The summary is a function of the document outside Meta; the page too,
// but for its run line (the fixture's failed rows have no stderr).
func TestReportsIgnoreMeta(t *testing.T) {
	a := fixture(t)
	b := fixture(t)
	b.Meta = studies.Meta{ToolVersion: "other", DurationMS: 99, StartedAt: "2030-01-01T00:00:00Z"}
	runLine := regexp.MustCompile(`<p class="sub" id="run">.*</p>`)
	for _, render := range []func(*studies.Results) string{
		func(r *studies.Results) string { var w bytes.Buffer; _ = Markdown(&w, r); return w.String() },
		func(r *studies.Results) string {
			var w bytes.Buffer
			_ = HTML(&w, r)
			return runLine.ReplaceAllString(w.String(), "")
		},
	} {
		if render(a) != render(b) {
			t.Fatal("a report depends on meta")
		}
	}
	var w bytes.Buffer
	if err := HTML(&w, b); err != nil {
		t.Fatal(err)
	}
	if got := runLine.FindString(w.String()); !strings.Contains(got, "<code>other</code> · run 2030-01-01 00:00 UTC · took 0s") {
		t.Errorf("run line %q", got)
	}
}

// A failed row's drill-down shows the server's last stderr lines, colour
// escapes removed; a document without finding_details (written before
// them) lists the findings by rule, with what each rule means.
func TestScoreboardDrillDown(t *testing.T) {
	res := fixture(t)
	res.Meta.Servers = map[string]studies.ServerMeta{"down": {Stderr: []string{"\x1b[31mERROR\x1b[39m listen EADDRINUSE", "  at main.js:1"}}}
	for i := range res.Servers {
		res.Servers[i].FindingDetails = nil
	}
	var w bytes.Buffer
	if err := HTML(&w, res); err != nil {
		t.Fatal(err)
	}
	page := w.String()
	for _, want := range []string{
		"<pre>ERROR listen EADDRINUSE\n  at main.js:1</pre>",
		`<h4>Findings by rule</h4>`,
		`<td>MCP-OUT-NO-SCHEMA</td><td class="num">10</td><td class="msg">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "\x1b") {
		t.Error("a terminal escape reached the page")
	}
}

// chromium returns the path of a headless-capable Chromium, skipping the test
// when there is none unless MCPDRILL_REQUIRE_CHROMIUM is set.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("MCPDRILL_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium not found (apt-get install -y chromium)")
	}
	t.Skip("chromium not found (apt-get install -y chromium); set MCPDRILL_REQUIRE_CHROMIUM to fail instead")
	return ""
}

// probeScript runs in the page after its own script, for the tests: it
// records whether SERVER's first finding is visible before and after its
// <details> is opened, and the page's scroll width once every <details> is
// open, as attributes of <html> that --dump-dom shows.
const probeScript = `<script>
(function () {
  var r = document.documentElement;
  // checkVisibility sees what a closed <details> hides (its content is
  // laid out, but not rendered).
  function visible(el) { return !!el && el.checkVisibility() && el.getClientRects().length > 0; }
  var target = document.querySelector('tr[data-server="SERVER"] + tr.more td.msg');
  if (target) {
    r.dataset.before = visible(target) ? "visible" : "hidden";
    target.closest("details").open = true;
    r.dataset.after = visible(target) ? "visible" : "hidden";
    r.dataset.finding = target.textContent;
  }
  // The version-drift table's changes open the same way.
  var change = document.querySelector('#drift details.changes td.msg');
  if (change) {
    r.dataset.driftBefore = visible(change) ? "visible" : "hidden";
    change.closest("details").open = true;
    r.dataset.driftAfter = visible(change) ? "visible" : "hidden";
  }
  Array.prototype.forEach.call(document.querySelectorAll("#scoreboard details, #drift details"), function (d) { d.open = true; });
  r.dataset.scrollWidth = String(r.scrollWidth);
  r.dataset.innerWidth = String(window.innerWidth);
})();
</script>
</body>`

// pageWidth is the window width the page must fit.
const pageWidth = 1400

// renderInChromium loads the page of res (with probeScript for server) in
// headless Chromium in a window pageWidth wide, at the URL fragment, and
// returns the DOM after the scripts ran.
func renderInChromium(t *testing.T, bin string, res *studies.Results, server, fragment string) string {
	t.Helper()
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	var b bytes.Buffer
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	html := strings.Replace(b.String(), "</body>", strings.ReplaceAll(probeScript, "SERVER", server), 1)
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--hide-scrollbars", "--window-size="+strconv.Itoa(pageWidth)+",1000",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+page+fragment)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	s := string(dom)
	if !strings.Contains(s, `data-rows="`+strconv.Itoa(len(res.Servers))+`"`) {
		t.Fatal("the page script did not run to the end (no data-rows on <html>)")
	}
	return s
}

// domAttr reads the first attribute name (one the page or probeScript
// sets on <html> or the table) from a dumped DOM.
func domAttr(dom, name string) string {
	m := regexp.MustCompile(` ` + regexp.QuoteMeta(name) + `="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		return ""
	}
	return m[1]
}

// checkFitsWindow fails when the page, every drill-down open, is wider
// than the window.
func checkFitsWindow(t *testing.T, dom string) {
	t.Helper()
	if w := domAttr(dom, "data-inner-width"); w != strconv.Itoa(pageWidth) {
		t.Fatalf("window %s px wide, want %d", w, pageWidth)
	}
	w, _ := strconv.Atoi(domAttr(dom, "data-scroll-width"))
	if w == 0 || w > pageWidth {
		t.Errorf("the page is %d px wide with every row open, more than the %d px window", w, pageWidth)
	}
	t.Logf("%d px wide with every row open", w)
}

// TestScoreboardInChromium loads the page in headless Chromium and checks
// what it renders after its script ran: one row per server, the sort
// requested in the URL fragment applied, a row's findings hidden until its
// <details> is opened and shown then, the page no wider than a 1400-px
// window with every row open, and the filter of the URL fragment applied.
func TestScoreboardInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser")
	}
	bin := chromium(t)
	res := enriched(t)
	s := renderInChromium(t, bin, res, "mid", "#sort=tools:desc")
	rows := regexp.MustCompile(`<tr data-server="([^"]+)"`).FindAllStringSubmatch(s, -1)
	if len(rows) != len(res.Servers) {
		t.Fatalf("rendered %d rows, want %d (one per server)", len(rows), len(res.Servers))
	}
	if !strings.Contains(s, `data-sorted="tools:desc"`) {
		t.Fatal("the #sort fragment was not applied")
	}
	// alpha has the most tools (10) and must come first when sorted by tools.
	if rows[0][1] != "alpha" {
		t.Fatalf("first row after sorting by tools: %q, want alpha", rows[0][1])
	}
	// Failed servers (tools -1) sink to the bottom in descending order.
	last := rows[len(rows)-1][1]
	for _, r := range res.Servers {
		if r.Name == last && r.Status == studies.StatusScanned {
			t.Fatalf("a scanned server (%s) sorted below the failed ones", last)
		}
	}
	// The drill-down: mid's finding is hidden until its row is opened.
	if b, a, f := domAttr(s, "data-before"), domAttr(s, "data-after"), domAttr(s, "data-finding"); b != "hidden" || a != "visible" || f != "/outputSchema: no outputSchema declared" {
		t.Errorf("mid's finding %q: %s before opening its row, %s after; want hidden, then visible", f, b, a)
	}
	// A version pair's changes are hidden until its <details> is opened.
	if b, a := domAttr(s, "data-drift-before"), domAttr(s, "data-drift-after"); b != "hidden" || a != "visible" {
		t.Errorf("zeta's version changes: %s before opening, %s after; want hidden, then visible", b, a)
	}
	checkFitsWindow(t, s)

	// #filter=WORDS keeps the servers whose row or drill-down has them all.
	s = renderInChromium(t, bin, res, "mid", "#filter=fastmcp%20MCP-OUT-NO-SCHEMA")
	if n := domAttr(s, "data-shown"); n != "1" {
		t.Errorf("the filter shows %s servers, want 1 (mid)", n)
	}
	if !strings.Contains(s, `<input type="search" id="filter"`) || strings.Count(s, "<tbody hidden") != len(res.Servers)-1 {
		t.Errorf("%d rows hidden by the filter, want %d", strings.Count(s, "<tbody hidden"), len(res.Servers)-1)
	}

	// The pilot's 50 servers, real names, reasons and messages, fit too.
	data, err := os.ReadFile(filepath.Join("..", "pilot", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	pilot, err := studies.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	checkFitsWindow(t, renderInChromium(t, bin, pilot, "", ""))
}
