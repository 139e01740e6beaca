package pages

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/scan"
	"github.com/mcpdrill/mcpdrill/studies"
)

// seedServer is one row of the seed study's published per-server table
// (results generated 2026-07-07, 31 servers): where the server came from,
// the package it ran (npm and PyPI) and its tools by tier. Handled is the
// seed's "handles errors": every one of its three probes that ran was
// refused visibly.
type seedServer struct {
	name, origin, pkg                           string
	tools, declared, enforceable, vacuous, wrap int
	handled                                     bool
}

// The seed study's origins: npm packages and PyPI packages over stdio, and
// remote Streamable HTTP servers.
const (
	originNPM    = "npm (stdio)"
	originPyPI   = "PyPI (uvx, stdio)"
	originRemote = "remote (Streamable HTTP)"
)

var seedServers = []seedServer{
	{"everything", originNPM, "@modelcontextprotocol/server-everything", 13, 1, 0, 1, 0, true},
	{"filesystem", originNPM, "@modelcontextprotocol/server-filesystem", 14, 14, 1, 13, 0, true},
	{"memory", originNPM, "@modelcontextprotocol/server-memory", 9, 9, 0, 9, 0, true},
	{"sequential-thinking", originNPM, "@modelcontextprotocol/server-sequential-thinking", 1, 1, 0, 1, 0, true},
	{"desktop-commander", originNPM, "@wonderwhy-er/desktop-commander", 26, 0, 0, 0, 0, true},
	{"context7", originNPM, "@upstash/context7-mcp", 2, 0, 0, 0, 0, true},
	{"mcp-server-chart", originNPM, "@antv/mcp-server-chart", 27, 0, 0, 0, 0, true},
	{"git-mcp-server", originNPM, "@cyanheads/git-mcp-server", 28, 28, 5, 23, 0, true},
	{"mcp-server-commands", originNPM, "mcp-server-commands", 1, 0, 0, 0, 0, true},
	{"playwright", originNPM, "@playwright/mcp", 23, 0, 0, 0, 0, true},
	{"time", originPyPI, "mcp-server-time", 2, 0, 0, 0, 0, true},
	{"fetch", originPyPI, "mcp-server-fetch", 1, 0, 0, 0, 0, true},
	{"git", originPyPI, "mcp-server-git", 12, 0, 0, 0, 0, true},
	{"sqlite", originPyPI, "mcp-server-sqlite", 6, 0, 0, 0, 0, false},
	{"duckduckgo", originPyPI, "duckduckgo-mcp-server", 2, 2, 0, 2, 0, true},
	{"calculator", originPyPI, "mcp-server-calculator", 1, 1, 0, 1, 0, true},
	{"wikipedia", originPyPI, "wikipedia-mcp", 22, 22, 0, 22, 0, true},
	{"arxiv", originPyPI, "mcp-simple-arxiv", 5, 5, 0, 5, 5, true},
	{"taskmanager", originNPM, "@kazuph/mcp-taskmanager", 10, 0, 0, 0, 0, true},
	{"nixos", originPyPI, "mcp-nixos", 2, 2, 0, 2, 2, true},
	{"pandoc", originPyPI, "mcp-pandoc", 1, 0, 0, 0, 0, true},
	{"youtube-transcript", originNPM, "@sinco-lab/mcp-youtube-transcript", 5, 0, 0, 0, 0, true},
	{"youtube-transcript2", originNPM, "@kimtaeyoon83/mcp-server-youtube-transcript", 1, 0, 0, 0, 0, true},
	{"text-editor", originPyPI, "mcp-text-editor", 2, 0, 0, 0, 0, true},
	{"tree-sitter", originPyPI, "mcp-server-tree-sitter", 26, 26, 0, 26, 0, true},
	{"json-mcp", originNPM, "@gongrzhe/server-json-mcp", 2, 0, 0, 0, 0, true},
	{"deepwiki", originRemote, "", 3, 3, 0, 3, 3, true},
	{"microsoft-learn", originRemote, "", 3, 2, 0, 2, 0, true},
	{"huggingface", originRemote, "", 8, 1, 1, 0, 0, true},
	{"gitmcp", originRemote, "", 5, 0, 0, 0, 0, true},
	{"cloudflare-docs", originRemote, "", 2, 0, 0, 0, 0, true},
}

// seedTotals pools seed rows as the seed did (tool-weighted) and keeps the
// per-server shares for a server-weighted mean.
type seedTotals struct {
	servers, tools, declared, enforceable, vacuous, wrapped, handled int
	noneShares, vacShares, enfShares                                 []float64
}

func poolSeed(rows []seedServer) seedTotals {
	var s seedTotals
	for _, r := range rows {
		s.servers++
		s.tools += r.tools
		s.declared += r.declared
		s.enforceable += r.enforceable
		s.vacuous += r.vacuous
		s.wrapped += r.wrap
		if r.handled {
			s.handled++
		}
		n := float64(r.tools)
		s.noneShares = append(s.noneShares, float64(r.tools-r.declared)/n)
		s.vacShares = append(s.vacShares, float64(r.vacuous)/n)
		s.enfShares = append(s.enfShares, float64(r.enforceable)/n)
	}
	return s
}

func (s seedTotals) none() int { return s.tools - s.declared }

// meanPct is the server-weighted mean of shares, as a percentage.
func meanPct(shares []float64) string {
	var sum float64
	for _, v := range shares {
		sum += v
	}
	mean := sum / float64(len(shares))
	return pct(&mean)
}

// counted are the rows the weighted figures count: scanned, neither a
// transport variant nor a previous release.
func counted(rows []studies.Row) []studies.Row {
	var out []studies.Row
	for _, r := range rows {
		if r.Status == studies.StatusScanned && r.VariantOf == "" && r.PreviousOf == "" {
			out = append(out, r)
		}
	}
	return out
}

func readStudyResults(t *testing.T, dir string) *studies.Results {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := studies.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s/results.json: %v", dir, err)
	}
	return res
}

func table(head string, rows [][]string) string {
	var b strings.Builder
	cols := strings.Split(head, " | ")
	fmt.Fprintf(&b, "| %s |\n|%s\n", head, strings.Repeat("---|", len(cols)))
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
	}
	return b.String()
}

func probeVerdict(r studies.Row, name string) scan.Verdict {
	for _, p := range r.Probes {
		if p.Name == name {
			return p.Verdict
		}
	}
	return ""
}

// comparisonTables renders the figure tables of studies/ecosystem/COMPARISON.md
// from the seed's published table and the two committed results.json files.
func comparisonTables(t *testing.T, eco, pilot *studies.Results) []string {
	t.Helper()
	seedAll := poolSeed(seedServers)
	var npmSeed []seedServer
	for _, s := range seedServers {
		if s.origin == originNPM {
			npmSeed = append(npmSeed, s)
		}
	}
	seedNPM := poolSeed(npmSeed)

	ea := eco.Aggregates
	etw, esw := ea.ToolWeighted, ea.ServerWeighted
	// The pilot's committed aggregates predate seed_probes: its figures are
	// recomputed from its rows by the same Aggregate.
	pa := studies.Aggregate(pilot.Servers)
	// (Its shares were written rounded, before figures were rounded only
	// when rendered: the counts are compared.)
	ptt, ctw := pa.ToolWeighted.Tally, pilot.Aggregates.ToolWeighted.Tally
	if [...]int{ptt.Tools, ptt.None, ptt.Vacuous, ptt.Partial, ptt.Enforceable, ptt.Invalid, ptt.Wrapped} != [...]int{ctw.Tools, ctw.None, ctw.Vacuous, ctw.Partial, ctw.Enforceable, ctw.Invalid, ctw.Wrapped} ||
		pa.ServerWeighted.Servers != pilot.Aggregates.ServerWeighted.Servers {
		t.Fatal("the pilot's rows no longer aggregate to the counts its results.json gives")
	}
	ptw, psw := pa.ToolWeighted, pa.ServerWeighted

	seedCell := ratio
	var out []string

	// 1. The headline, tool-weighted and server-weighted.
	out = append(out, table("figure | seed | seed, its npm stdio servers | pilot | ecosystem", [][]string{
		{"counted servers / tools", fmt.Sprintf("%d / %d", seedAll.servers, seedAll.tools), fmt.Sprintf("%d / %d", seedNPM.servers, seedNPM.tools),
			fmt.Sprintf("%d / %d", psw.Servers, ptw.Tools), fmt.Sprintf("%d / %d", esw.Servers, etw.Tools)},
		{"no outputSchema", seedCell(seedAll.none(), seedAll.tools), seedCell(seedNPM.none(), seedNPM.tools), ratio(ptw.None, ptw.Tools), ratio(etw.None, etw.Tools)},
		{"vacuous", seedCell(seedAll.vacuous, seedAll.tools), seedCell(seedNPM.vacuous, seedNPM.tools), ratio(ptw.Vacuous, ptw.Tools), ratio(etw.Vacuous, etw.Tools)},
		{"rejects at least one corruption (the seed's \"enforceable\")", seedCell(seedAll.enforceable, seedAll.tools), seedCell(seedNPM.enforceable, seedNPM.tools),
			ratio(ptw.Enforceable+ptw.Partial, ptw.Tools), ratio(etw.Enforceable+etw.Partial, etw.Tools)},
		{"partial (no seed counterpart)", "–", "–", ratio(ptw.Partial, ptw.Tools), ratio(etw.Partial, etw.Tools)},
		{"enforceable, every sampled shape (no seed counterpart)", "–", "–", ratio(ptw.Enforceable, ptw.Tools), ratio(etw.Enforceable, etw.Tools)},
		{"rejects at least one, of declared schemas", seedCell(seedAll.enforceable, seedAll.declared), seedCell(seedNPM.enforceable, seedNPM.declared),
			ratio(ptw.Enforceable+ptw.Partial, ptw.Tools-ptw.None), ratio(etw.Enforceable+etw.Partial, etw.Tools-etw.None)},
		{"SDK-wrapped tools", fmt.Sprintf("%d (Python FastMCP)", seedAll.wrapped), fmt.Sprint(seedNPM.wrapped), fmt.Sprint(ptw.Wrapped), fmt.Sprint(etw.Wrapped)},
		{"server-weighted: no outputSchema", meanPct(seedAll.noneShares), meanPct(seedNPM.noneShares), pct(psw.NoneShare), pct(esw.NoneShare)},
		{"server-weighted: vacuous", meanPct(seedAll.vacShares), meanPct(seedNPM.vacShares), pct(psw.VacuousShare), pct(esw.VacuousShare)},
		{"server-weighted: rejects at least one", meanPct(seedAll.enfShares), meanPct(seedNPM.enfShares), pct(psw.RejectsAnyShare), pct(esw.RejectsAnyShare)},
		{"handle the seed's 3 error probes", fmt.Sprintf("%d/%d", seedAll.handled, seedAll.servers), fmt.Sprintf("%d/%d", seedNPM.handled, seedNPM.servers),
			fmt.Sprintf("%d/%d", pa.SeedProbes.Handled, pa.SeedProbes.Measured), fmt.Sprintf("%d/%d", ea.SeedProbes.Handled, ea.SeedProbes.Measured)},
		{"refuse every probe mcpdrill sends (7)", "–", "–", fmt.Sprintf("%d/%d", psw.AllErrorsHandled, psw.ErrorsMeasured), fmt.Sprintf("%d/%d", esw.AllErrorsHandled, esw.ErrorsMeasured)},
		{"server-weighted: mean error handling, every probe", "–", "–", pct(psw.ErrorHandling), pct(esw.ErrorHandling)},
	}))

	// 2. The seed by origin: where its declared schemas came from, and how
	// many of its packages this run's population holds (npm rows are named
	// by their package, PyPI rows "pypi:" and theirs).
	byName := map[string]studies.Row{}
	for _, r := range eco.Servers {
		byName[r.Name] = r
	}
	var origins [][]string
	for _, o := range []string{originNPM, originPyPI, originRemote} {
		var rows []seedServer
		inRun := 0
		for _, s := range seedServers {
			if s.origin != o {
				continue
			}
			rows = append(rows, s)
			name := s.pkg
			if o == originPyPI {
				name = "pypi:" + s.pkg
			}
			if _, ok := byName[name]; ok && s.pkg != "" {
				inRun++
			}
		}
		p := poolSeed(rows)
		origins = append(origins, []string{o, fmt.Sprint(p.servers), fmt.Sprint(p.tools), seedCell(p.none(), p.tools), seedCell(p.vacuous, p.tools),
			seedCell(p.enforceable, p.tools), seedCell(p.declared, seedAll.declared), fmt.Sprint(p.wrapped), fmt.Sprintf("%d/%d", p.handled, p.servers),
			fmt.Sprintf("%d/%d", inRun, p.servers)})
	}
	out = append(out, table("seed servers from | servers | tools | no outputSchema | vacuous | enforceable | share of the seed's declared schemas | FastMCP-wrapped | handle the 3 probes | in this run's population", origins))

	// 3. The seed's npm servers in the ecosystem run.
	var shared [][]string
	var seedShared []seedServer
	var ecoShared []studies.Row
	for _, s := range npmSeed {
		seedCol := fmt.Sprintf("%d: %d/%d/%d", s.tools, s.tools-s.declared, s.vacuous, s.enforceable)
		r, ok := byName[s.pkg]
		switch {
		case !ok:
			shared = append(shared, []string{s.pkg, seedCol, "not a candidate", "–"})
		case r.Status != studies.StatusScanned:
			shared = append(shared, []string{s.pkg, seedCol, cmp.Or(r.Outcome, r.Status), "–"})
		default:
			none, vac, part, enf, _ := tiers(r)
			ver := r.Package[strings.LastIndex(r.Package, "@")+1:]
			shared = append(shared, []string{s.pkg, seedCol, ver, fmt.Sprintf("%d: %d/%d/%d/%d", len(r.Tools), none, vac, part, enf)})
			seedShared = append(seedShared, s)
			ecoShared = append(ecoShared, r)
		}
	}
	ss, es := poolSeed(seedShared), studies.Aggregate(ecoShared).ToolWeighted
	shared = append(shared, []string{fmt.Sprintf("the %d scanned in both", len(seedShared)),
		fmt.Sprintf("%d tools: none %s, vacuous %s, enforceable %s", ss.tools, seedCell(ss.none(), ss.tools), seedCell(ss.vacuous, ss.tools), seedCell(ss.enforceable, ss.tools)),
		"",
		fmt.Sprintf("%d tools: none %s, vacuous %s, rejects at least one %s", es.Tools, ratio(es.None, es.Tools), ratio(es.Vacuous, es.Tools), ratio(es.Enforceable+es.Partial, es.Tools))})
	out = append(out, table("seed npm server | seed: tools: none/vac/enf | this run: version | this run: tools: none/vac/part/enf", shared))

	// 4. What weighs in the ecosystem's figures.
	cnt := counted(eco.Servers)
	if len(cnt) != esw.Servers {
		t.Fatalf("%d counted rows, results.json's server-weighted figures count %d", len(cnt), esw.Servers)
	}
	var old, declaring, rejecting []studies.Row
	for _, r := range cnt {
		if r.Protocol != nil && r.Protocol.Revision < "2025-06-18" {
			old = append(old, r)
		}
		none, _, part, enf, _ := tiers(r)
		if none < len(r.Tools) {
			declaring = append(declaring, r)
		}
		if part+enf > 0 {
			rejecting = append(rejecting, r)
		}
	}
	bySize := slices.Clone(cnt)
	slices.SortStableFunc(bySize, func(a, b studies.Row) int {
		return cmp.Or(cmp.Compare(len(b.Tools), len(a.Tools)), cmp.Compare(a.Name, b.Name))
	})
	const big = 5
	var bigTools int
	var bigNames []string
	for _, r := range bySize[:big] {
		bigTools += len(r.Tools)
		bigNames = append(bigNames, fmt.Sprintf("%s %d", r.Name, len(r.Tools)))
	}
	rest := studies.Aggregate(bySize[big:])
	oldA := studies.Aggregate(old)
	weigh := [][]string{
		{"servers declaring at least one outputSchema", fmt.Sprintf("%d/%d", len(declaring), len(cnt)), ""},
		{"servers with at least one schema that rejects a corruption", fmt.Sprintf("%d/%d", len(rejecting), len(cnt)), ""},
		{"servers negotiating a revision older than 2025-06-18, which has no outputSchema", fmt.Sprintf("%d/%d", len(old), len(cnt)),
			fmt.Sprintf("%d tools, %s of all", oldA.ToolWeighted.Tools, ratio(oldA.ToolWeighted.Tools, etw.Tools))},
		{fmt.Sprintf("the %d largest servers (%s)", big, strings.Join(bigNames, ", ")), fmt.Sprintf("%d/%d", big, len(cnt)),
			fmt.Sprintf("%d tools, %s of all, %s of them without outputSchema", bigTools, ratio(bigTools, etw.Tools), ratio(studies.Aggregate(bySize[:big]).ToolWeighted.None, bigTools))},
		{fmt.Sprintf("the other %d servers, tool-weighted", len(cnt)-big), fmt.Sprintf("%d/%d", len(cnt)-big, len(cnt)),
			fmt.Sprintf("%d tools: none %s, vacuous %s, rejects at least one %s", rest.ToolWeighted.Tools, ratio(rest.ToolWeighted.None, rest.ToolWeighted.Tools),
				ratio(rest.ToolWeighted.Vacuous, rest.ToolWeighted.Tools), ratio(rest.ToolWeighted.Enforceable+rest.ToolWeighted.Partial, rest.ToolWeighted.Tools))},
	}
	out = append(out, table("counted servers of this run | servers | tools", weigh))

	// 4b. Tiers by negotiated revision.
	byRev := map[string][]studies.Row{}
	for _, r := range cnt {
		rev := "–"
		if r.Protocol != nil {
			rev = r.Protocol.Revision
		}
		byRev[rev] = append(byRev[rev], r)
	}
	var revs [][]string
	for _, k := range slices.Sorted(maps.Keys(byRev)) {
		g := studies.Aggregate(byRev[k]).ToolWeighted
		revs = append(revs, []string{k, fmt.Sprint(len(byRev[k])), fmt.Sprint(g.Tools), ratio(g.None, g.Tools), ratio(g.Vacuous, g.Tools), ratio(g.Enforceable+g.Partial, g.Tools)})
	}
	out = append(out, table("negotiated revision | servers | tools | no outputSchema | vacuous | rejects at least one", revs))

	// 5. Tiers by observed SDK (results.json's by_sdk).
	var sdks [][]string
	for _, k := range slices.Sorted(maps.Keys(ea.BySDK)) {
		g := ea.BySDK[k]
		sdks = append(sdks, []string{k, fmt.Sprint(g.Servers), fmt.Sprint(g.Tools), ratio(g.None, g.Tools), ratio(g.Vacuous, g.Tools), ratio(g.Enforceable+g.Partial, g.Tools), fmt.Sprint(g.Wrapped)})
	}
	out = append(out, table("observed SDK | servers | tools | no outputSchema | vacuous | rejects at least one | wrapped", sdks))

	// 6. The counted servers that fail the seed's three probes.
	var failing [][]string
	for _, r := range cnt {
		ran, handled := 0, 0
		var cells []string
		for _, name := range []string{"unknown_method", "unknown_tool", "missing_required_args"} {
			v := probeVerdict(r, name)
			cells = append(cells, cmp.Or(string(v), "–"))
			if v != "" && v != scan.VerdictSkipped {
				ran++
				if v.Handled() {
					handled++
				}
			}
		}
		if ran > 0 && handled < ran {
			failing = append(failing, append([]string{r.Name}, cells...))
		}
	}
	if len(failing) != ea.SeedProbes.Measured-ea.SeedProbes.Handled {
		t.Fatalf("%d servers fail the seed's probes here, results.json says %d", len(failing), ea.SeedProbes.Measured-ea.SeedProbes.Handled)
	}
	out = append(out, table("server failing the seed's probes | unknown_method | unknown_tool | missing_required_args", failing))

	// 7. Version drift, beside the peers' audits.
	vd := ea.VersionDrift
	out = append(out, table("version pairs of this run | count", [][]string{
		{"pairs listed (a release and the one before it)", fmt.Sprint(vd.Pairs)},
		{"pairs scanned at both releases", fmt.Sprint(vd.BothScanned)},
		{"pairs scanned at neither release", fmt.Sprint(vd.NeitherScanned)},
		{"pairs compared (both listings whole)", fmt.Sprint(vd.Compared)},
		{"compared pairs that changed", fmt.Sprintf("%d/%d", vd.WithChanges, vd.Compared)},
		{"compared pairs with a breaking change", fmt.Sprintf("%d/%d", vd.WithBreaking, vd.Compared)},
		{"of them in a minor or patch step (semver violations)", fmt.Sprintf("%d/%d", vd.SemverViolations, vd.WithBreaking)},
		{"pairs that removed tools (absent under every known configuration)", fmt.Sprintf("%d/%d (%d)", vd.WithRemovals, vd.Compared, vd.ToolsRemoved)},
		{"pairs whose default listing dropped tools a known configuration lists", fmt.Sprintf("%d/%d (%d)", vd.WithUnlisted, vd.Compared, vd.ToolsUnlisted)},
		{"pairs that changed tool descriptions (descriptions changed)", fmt.Sprintf("%d/%d (%d)", vd.WithDescriptionChanges, vd.Compared, vd.DescriptionsChanged)},
	}))
	return out
}

// published are the figures COMPARISON.md quotes from elsewhere than the
// results: the seed's headline as it was shown (rounded) and the peers'
// published figures.
var published = []string{
	"3%", "56%", "42%", "30/31", // the seed's headline
	"31/31",                  // the seed's servers started, as it reported
	"22%",                    // outputSchema survey: 231 servers, share declaring a specific outputSchema
	"58.5%", "25.4%", "8.6%", // the registry remotes' probe: open, need auth, not MCP
	"39%", // MCP Vitals: remotes live
}

// figureToken finds a share with its ratio ("0.7% (17/2375)"), which must
// be known whole, a bare share or a bare ratio.
var figureToken = regexp.MustCompile(`\d+(?:\.\d+)?% \(\d+/\d+\)|\d+(?:\.\d+)?%|\b\d+/\d+\b`)

// TestComparisonFigures keeps studies/ecosystem/COMPARISON.md to what the
// committed results give: its figure tables are rendered here from the
// seed's published per-server table and the ecosystem's and pilot's
// results.json, and must appear in it verbatim; every other share or ratio
// it quotes must be one of those tables' or a published one.
func TestComparisonFigures(t *testing.T) {
	seed := poolSeed(seedServers)
	if got := [...]int{seed.servers, seed.tools, seed.none(), seed.vacuous, seed.enforceable, seed.wrapped, seed.handled}; got != [...]int{31, 265, 148, 110, 7, 10, 30} {
		t.Fatalf("the seed's per-server table sums to %v, its headline is 31 servers, 265 tools, 148/110/7, 10 wrapped, 30 handled", got)
	}
	tables := comparisonTables(t, readStudyResults(t, "ecosystem"), readStudyResults(t, "pilot"))
	data, err := os.ReadFile(filepath.Join("..", "ecosystem", "COMPARISON.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	known := map[string]bool{}
	for _, s := range published {
		known[s] = true
	}
	for _, tb := range tables {
		if !strings.Contains(doc, tb) {
			t.Errorf("COMPARISON.md lacks this table, computed from the results:\n%s", tb)
		}
		for _, f := range figureToken.FindAllString(tb, -1) {
			known[f] = true
		}
	}
	for _, f := range figureToken.FindAllString(doc, -1) {
		if !known[f] {
			t.Errorf("COMPARISON.md quotes %s, which no computed table or published figure gives", f)
		}
	}
}
