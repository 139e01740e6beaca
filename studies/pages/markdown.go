package pages

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/scan"
	"github.com/mcpdrill/mcpdrill/studies"
)

// pct formats a share in [0,1] as a percentage with one decimal; nil is "–"
// (scan.Percent).
func pct(p *float64) string { return scan.Percent(p, "–") }

func sortedCounts(m map[string]int) []string {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return out
}

// mdCell makes a value inert Markdown for a table cell or a list item
// (safetext.Markdown): what a server, a registry or servers.json says can
// form no link, image, HTML or cell break.
func mdCell(s string) string { return safetext.Markdown(s) }

// mdCounts is sortedCounts with each key made inert (mdCell).
func mdCounts(m map[string]int) []string {
	out := sortedCounts(m)
	for i, s := range out {
		out[i] = mdCell(s)
	}
	return out
}

// tiers counts a row's tools per output-contract tier.
func tiers(r studies.Row) (none, vac, part, enf, inv int) {
	for _, t := range r.Tools {
		switch t.OutputContract {
		case scan.ContractEnforceable:
			enf++
		case scan.ContractPartial:
			part++
		case scan.ContractVacuous:
			vac++
		case scan.ContractInvalid:
			inv++
		default:
			none++
		}
	}
	return
}

// probeCell abbreviates a row's probe verdicts, e.g. "j/t/t".
func probeCell(r studies.Row) string {
	if len(r.Probes) == 0 {
		return "–"
	}
	var parts []string
	for _, p := range r.Probes {
		v := string(p.Verdict)
		abbr := map[string]string{"jsonrpc_error": "j", "tool_error": "t", "http_error": "h", "accepted": "A", "timeout": "T", "ignored": "i", "crash": "C", "skipped": "s"}[v]
		if abbr == "" {
			abbr = "?"
		}
		if p.Conformant != nil && !*p.Conformant {
			abbr += "*"
		}
		parts = append(parts, abbr)
	}
	return strings.Join(parts, "/")
}

// Markdown writes the study summary. It uses nothing from Meta, so the same
// results give the same summary byte for byte.
func Markdown(w io.Writer, r *studies.Results) error {
	var b strings.Builder
	a := r.Aggregates
	tw, sw := a.ToolWeighted, a.ServerWeighted
	fmt.Fprintf(&b, "# Study summary\n\n")
	fmt.Fprintf(&b, "servers.json `%s` · %d servers listed · %d scanned · %d failed · %d skipped\n\n",
		r.SpecHash, a.Servers, a.Scanned, a.Failed, a.Skipped)
	fmt.Fprintf(&b, "Settings: per-server deadline %s, per-request timeout %s, second connection %v. results.json schema %s, scan schema %s.\n\n",
		ms(r.Settings.DeadlineMS), ms(r.Settings.RequestTimeoutMS), r.Settings.SecondConnection, r.SchemaVersion, r.ScanSchemaVersion)
	if r.Shard != nil {
		fmt.Fprintf(&b, "**This is shard %d/%d only**; merge the shards with `mcpdrill study merge`.\n\n", r.Shard.Index, r.Shard.Count)
	}

	if a.PreviousReleases > 0 {
		fmt.Fprintf(&b, "%d scanned rows are previous releases of another row (`previous_of`): they are listed, their probes tallied and their tools compared with the newer release (see Version drift), but they are left out of the weighted figures.\n\n", a.PreviousReleases)
	}
	if a.Variants > 0 {
		fmt.Fprintf(&b, "%d scanned rows are transport variants of another row (`variant_of`): they are listed and their probes tallied, but they are left out of the weighted figures.\n\n", a.Variants)
	}
	writeOutcomes(&b, a)
	b.WriteString("## Output contracts\n\n")
	b.WriteString("Tiers: no schema, the tool declares no outputSchema; vacuous, its schema rejects none of the corrupted payloads sent; partial, it rejects those of some sampled shapes; enforceable, of every sampled shape; invalid, the schema does not compile.\n\n")
	b.WriteString("Tool-weighted pools every tool of every counted server (scanned, neither a transport variant nor a previous release); server-weighted is the mean of each counted server's shares (servers with at least one tool). " +
		"Each schema's corrupted payload is tried on every shape sampled (branches, minimal instance, nullable values null, arrays empty): enforceable rejects all of them, partial some, vacuous none. " +
		"\"Rejects at least one\" (enforceable + partial) is the figure comparable with a single-payload method such as the anchor study's.\n\n")
	fmt.Fprintf(&b, "| tier | tool-weighted (%d tools) | server-weighted (%d servers) |\n|---|---|---|\n", tw.Tools, sw.Servers)
	fmt.Fprintf(&b, "| no outputSchema | %s (%d) | %s |\n", pct(tw.NoneShare), tw.None, pct(sw.NoneShare))
	fmt.Fprintf(&b, "| vacuous | %s (%d) | %s |\n", pct(tw.VacuousShare), tw.Vacuous, pct(sw.VacuousShare))
	fmt.Fprintf(&b, "| partial | %s (%d) | %s |\n", pct(tw.PartialShare), tw.Partial, pct(sw.PartialShare))
	fmt.Fprintf(&b, "| enforceable | %s (%d) | %s |\n", pct(tw.EnforceableShare), tw.Enforceable, pct(sw.EnforceableShare))
	fmt.Fprintf(&b, "| invalid schema | %s (%d) | %s |\n", pct(tw.InvalidShare), tw.Invalid, pct(sw.InvalidShare))
	fmt.Fprintf(&b, "| enforceable of declared | %s | %s |\n", pct(tw.EnforceableOfDeclared), pct(sw.EnforceableOfDeclared))
	fmt.Fprintf(&b, "| rejects at least one (enforceable + partial) | %s (%d) | %s |\n", pct(tw.RejectsAnyShare), tw.Enforceable+tw.Partial, pct(sw.RejectsAnyShare))
	fmt.Fprintf(&b, "| rejects at least one, of declared | %s | %s |\n", pct(tw.RejectsAnyOfDeclared), pct(sw.RejectsAnyOfDeclared))
	fmt.Fprintf(&b, "| mean leaf rate | %s | %s |\n\n", pct(tw.LeafRate), pct(sw.LeafRate))
	fmt.Fprintf(&b, "%d of %d servers declare no outputSchema at all; %d have at least one vacuous schema; %d at least one partial schema; %d at least one enforceable schema. SDK-wrapped schemas: %d tools.\n\n",
		sw.WithoutSchemas, sw.Servers, sw.WithVacuous, sw.WithPartial, sw.WithEnforceable, tw.Wrapped)

	writeSeedComparison(&b, r)
	writeProviders(&b, r)
	writeSDKs(&b, r)
	b.WriteString("## Error handling\n\n")
	fmt.Fprintf(&b, "%d of %d servers refused every probe visibly (JSON-RPC error, isError or HTTP error); %d of %d answered every probe as their protocol revision asks. Mean error handling %s, mean error conformance %s.\n\n",
		sw.AllErrorsHandled, sw.ErrorsMeasured, sw.AllErrorsConformant, sw.ErrorsMeasured, pct(sw.ErrorHandling), pct(sw.ErrorConformance))
	if len(a.Probes) > 0 {
		b.WriteString("| probe | verdicts | conformant |\n|---|---|---|\n")
		for _, n := range slices.Sorted(maps.Keys(a.Probes)) {
			t := a.Probes[n]
			fmt.Fprintf(&b, "| %s | %s | %d/%d |\n", mdCell(n), strings.Join(mdCounts(t.Verdicts), ", "), t.Conformant, t.Ran)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Mean specification conformance (checks passed of checks decided): %s.\n\n", pct(sw.SpecConformance))
	writeVersionDrift(&b, r)

	b.WriteString("## Population\n\n")
	fmt.Fprintf(&b, "- Negotiated revisions: %s\n", orNone(mdCounts(a.Revisions)))
	fmt.Fprintf(&b, "- Transports: %s\n", orNone(mdCounts(a.Transports)))
	fmt.Fprintf(&b, "- SDKs (as declared in servers.json): %s\n", orNone(mdCounts(a.SDKs)))
	fmt.Fprintf(&b, "- SDKs (observed, else declared): %s\n", orNone(mdCounts(a.SDKsObserved)))
	if a.Failed > 0 {
		fmt.Fprintf(&b, "- Failures: %s\n", orNone(mdCounts(a.Failures)))
	}
	b.WriteString("\n## Servers\n\n")
	b.WriteString("Probes in name order: j JSON-RPC error, t isError result, h HTTP error, A accepted, T timeout, i ignored (a dropped frame), C crash, s skipped; * not what the revision asks for.\n\n")
	b.WriteString("| server | package | SDK | status | revision | tools | none/vac/part/enf/inv | leaf rate | probes | error conf. | spec conf. |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Servers {
		rev := "–"
		if row.Protocol != nil {
			rev = row.Protocol.Revision + " " + row.Protocol.Transport
		}
		status := row.Status
		if row.Failure != "" {
			status += " (" + row.Failure + ")"
		}
		none, vac, part, enf, inv := tiers(row)
		var leaf, errc, spec *float64
		if row.Scores != nil {
			sh := row.Tally().Shares()
			leaf, errc, spec = sh.LeafRate, sh.ErrorConformance, sh.SpecConformance
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %d/%d/%d/%d/%d | %s | %s | %s | %s |\n",
			mdCell(row.Name), mdCell(orDash(row.Package)), mdCell(sdkCell(row)), mdCell(status), mdCell(rev), len(row.Tools),
			none, vac, part, enf, inv, pct(leaf), probeCell(row), pct(errc), pct(spec))
	}
	var failed []studies.Row
	for _, row := range r.Servers {
		if row.Status != studies.StatusScanned {
			failed = append(failed, row)
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Not scanned\n\n")
		for _, row := range failed {
			kind := row.Status
			if row.Failure != "" {
				kind = row.Failure
			}
			fmt.Fprintf(&b, "- **%s** (%s): %s\n", mdCell(row.Name), mdCell(kind), mdCell(row.Reason))
		}
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	return nil
}

func ms(v int64) string {
	if v%1000 == 0 {
		return fmt.Sprintf("%ds", v/1000)
	}
	return fmt.Sprintf("%dms", v)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// sdkCell is a row's SDK as the tables show it: the observed SDK and
// framework, or the declared label marked as such when nothing was
// observed; a disagreeing declared label follows the observed one.
func sdkCell(r studies.Row) string {
	o := r.SDKObserved
	if o == nil || o.Name == "" {
		if r.SDK == "" {
			return "–"
		}
		return r.SDK + " (declared)"
	}
	s := o.Name
	if o.Framework != "" {
		s += " / " + o.Framework
	}
	if r.SDKDisagrees() {
		s += " (declared " + r.SDK + ")"
	}
	return s
}

// seed is the seed study's published figures (31 servers, 265 tools;
// METHODOLOGY, "The seed study"): tools without an outputSchema, vacuous
// and enforceable (its one payload rejected), FastMCP-wrapped tools, and
// servers that handled its three error probes.
var seed = struct {
	Servers, Tools, None, Vacuous, Enforceable, Wrapped, Handled int
}{31, 265, 148, 110, 7, 10, 30}

// ratio is "share (n/d)", the share rounded once from the exact quotient
// (148/265 is 55.8%, as the seed published it).
func ratio(n, d int) string {
	return fmt.Sprintf("%s (%d/%d)", pct(scan.Share(n, d)), n, d)
}

// writeSeedComparison puts the seed study's headline beside this run's.
func writeSeedComparison(b *strings.Builder, r *studies.Results) {
	a := r.Aggregates
	tw, sw := a.ToolWeighted, a.ServerWeighted
	b.WriteString("## Beside the seed study\n\n")
	fmt.Fprintf(b, "The seed study published figures for %d servers and %d tools; this run's are over the %d counted servers (scanned, neither a variant nor a previous release) and their %d tools. "+
		"The seed counted a tool enforceable when its one payload was rejected, which compares with \"rejects at least one\" here.\n\n", seed.Servers, seed.Tools, sw.Servers, tw.Tools)
	b.WriteString("| figure | seed | this run, tool-weighted | this run, server-weighted |\n|---|---|---|---|\n")
	fmt.Fprintf(b, "| no outputSchema | %s | %s | %s |\n", ratio(seed.None, seed.Tools), ratio(tw.None, tw.Tools), pct(sw.NoneShare))
	fmt.Fprintf(b, "| vacuous | %s | %s | %s |\n", ratio(seed.Vacuous, seed.Tools), ratio(tw.Vacuous, tw.Tools), pct(sw.VacuousShare))
	fmt.Fprintf(b, "| enforceable (seed: its one payload rejected; here: rejects at least one) | %s | %s | %s |\n", ratio(seed.Enforceable, seed.Tools), ratio(tw.Enforceable+tw.Partial, tw.Tools), pct(sw.RejectsAnyShare))
	fmt.Fprintf(b, "| partial (no seed counterpart) | – | %s | %s |\n", ratio(tw.Partial, tw.Tools), pct(sw.PartialShare))
	fmt.Fprintf(b, "| enforceable, every sampled shape (no seed counterpart) | – | %s | %s |\n", ratio(tw.Enforceable, tw.Tools), pct(sw.EnforceableShare))
	fmt.Fprintf(b, "| SDK-wrapped tools | %d (Python FastMCP) | %d | – |\n", seed.Wrapped, tw.Wrapped)
	fmt.Fprintf(b, "| handle the seed's 3 error probes (unknown method, unknown tool, missing arguments) | %d/%d | %d/%d servers | – |\n\n", seed.Handled, seed.Servers, a.SeedProbes.Handled, a.SeedProbes.Measured)
	var wrapping []string
	for _, k := range slices.Sorted(maps.Keys(a.ByFramework)) {
		if g := a.ByFramework[k]; g.Wrapped > 0 {
			wrapping = append(wrapping, mdCell(fmt.Sprintf("%s %d", k, g.Wrapped)))
		}
	}
	fmt.Fprintf(b, "SDK-wrapped tools by framework: %s.", orNone(wrapping))
	if g, ok := a.BySDK["python-sdk"]; !ok || g.Tools == 0 {
		b.WriteString(" No Python server was scanned in this run, so the Python FastMCP figure stays the seed's (10 tools) until a run that reaches PyPI adds it.")
	}
	b.WriteString("\n\nWhere the declared schemas come from (counted servers, by observed SDK):\n\n")
	b.WriteString("| SDK | servers | tools | share of the declared schemas | no schema | vacuous | rejects at least one |\n|---|---|---|---|---|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(a.BySDK)) {
		g := a.BySDK[k]
		declared := g.Tools - g.None
		fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %s | %s |\n", mdCell(k), g.Servers, g.Tools, ratio(declared, tw.Tools-tw.None), pct(g.NoneShare), pct(g.VacuousShare), pct(g.RejectsAnyShare))
	}
	b.WriteString("\n")
}

// writeSDKs writes the tiers per observed SDK and framework and the
// declared labels the evidence contradicts.
func writeSDKs(b *strings.Builder, r *studies.Results) {
	a := r.Aggregates
	b.WriteString("## By SDK and framework\n\n")
	fmt.Fprintf(b, "The SDK and framework are observed (sdk_observed: the installed package's dependencies, Go build info, a venv's dist-info, the wrap marker, serverInfo) for %d of %d rows; the others count under their declared label, or unknown. Tool-weighted shares over counted servers.\n\n", a.SDKObservedRows, a.Servers)
	for _, t := range []struct {
		title string
		m     map[string]studies.Figures
	}{{"SDK", a.BySDK}, {"framework", a.ByFramework}} {
		fmt.Fprintf(b, "| %s | servers | tools | no schema | vacuous | partial | enforceable | invalid | wrapped |\n|---|---|---|---|---|---|---|---|---|\n", t.title)
		for _, k := range slices.Sorted(maps.Keys(t.m)) {
			g := t.m[k]
			fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %s | %s | %s | %d |\n", mdCell(k), g.Servers, g.Tools,
				pct(g.NoneShare), pct(g.VacuousShare), pct(g.PartialShare), pct(g.EnforceableShare), pct(g.InvalidShare), g.Wrapped)
		}
		b.WriteString("\n")
	}
	if len(a.SDKDisagreements) > 0 {
		b.WriteString("Declared labels the evidence contradicts (the observed one counts):\n\n")
		for _, d := range a.SDKDisagreements {
			obs := d.Observed
			if d.Framework != "" {
				obs += " / " + d.Framework
			}
			fmt.Fprintf(b, "- **%s**: declared %s, observed %s\n", mdCell(d.Name), mdCell(d.Declared), mdCell(obs))
		}
		b.WriteString("\n")
	}
}

// writeVersionDrift writes the version pairs, semver violations first.
func writeVersionDrift(b *strings.Builder, r *studies.Results) {
	d := r.Aggregates.VersionDrift
	if d.Pairs == 0 {
		return
	}
	b.WriteString("## Version drift\n\n")
	fmt.Fprintf(b, "%s listed (a release and the one before it, `previous_of`); %d scanned at both releases, %d at neither; %s compared (both listings whole) with the drift catalogue (drift.Diff, as `mcpdrill drift` grades a baseline against a live server). "+
		"Steps: %s. Of the compared pairs %d changed; %d shipped a breaking change (inside a schema: one a witness value shows), %d of them in a minor or patch step of semantic versions (a semver violation; calendar versions promise nothing, and before 1.0 the leftmost non-zero component is the major one, npm's caret rule); %d had changes the grading could not decide; "+
		"%d removed %s (absent under every configuration the study knows for the package); %d no longer list %s by default (listed under a known configuration, or not established under one); %d changed %s.\n\n",
		plural(d.Pairs, "pair"), d.BothScanned, d.NeitherScanned, plural(d.Compared, "pair"), orNone(mdCounts(d.Steps)), d.WithChanges, d.WithBreaking, d.SemverViolations, d.WithUndetermined,
		d.WithRemovals, plural(d.ToolsRemoved, "tool"), d.WithUnlisted, plural(d.ToolsUnlisted, "tool"), d.WithDescriptionChanges, plural(d.DescriptionsChanged, "tool description"))
	if len(d.ByRule) > 0 {
		fmt.Fprintf(b, "Changes by rule: %s.\n\n", strings.Join(mdCounts(d.ByRule), ", "))
	}
	b.WriteString("| package | from → to | step | changes | tools removed | no longer listed by default | descriptions changed | semver violation |\n|---|---|---|---|---|---|---|---|\n")
	compared, notCompared := driftRows(r.Servers)
	for _, row := range compared {
		vd := row.VersionDrift
		viol := "no"
		if vd.SemverViolation {
			viol = "**yes**"
		}
		fmt.Fprintf(b, "| %s | %s → %s | %s | %s | %s | %s | %s | %s |\n", mdCell(row.Name), mdCell(orDash(vd.From)), mdCell(orDash(vd.To)), mdCell(vd.Step),
			mdCell(driftSummary(vd)), mdCell(orNone(vd.ToolsRemoved)), mdCell(orNone(vd.ToolsUnlisted)), mdCell(orNone(vd.DescriptionsChanged)), viol)
	}
	b.WriteString("\n")
	if len(notCompared) > 0 {
		fmt.Fprintf(b, "Not compared (%d): ", len(notCompared))
		for i, row := range notCompared {
			if i > 0 {
				b.WriteString("; ")
			}
			vd := row.VersionDrift
			fmt.Fprintf(b, "%s %s → %s (%s)", mdCell(row.Name), mdCell(orDash(vd.From)), mdCell(orDash(vd.To)), mdCell(vd.Reason))
		}
		b.WriteString(".\n\n")
	}
}

// writeOutcomes writes the rows by outcome, each with what it means.
func writeOutcomes(b *strings.Builder, a studies.Aggregates) {
	b.WriteString("## Outcomes\n\n| outcome | rows | what it means |\n|---|---|---|\n")
	for _, o := range outcomeTable(a) {
		fmt.Fprintf(b, "| %s | %d | %s |\n", o.Outcome, o.Rows, o.Meaning)
	}
	b.WriteString("\n")
}

// outcomeRow is one line of the outcome breakdown.
type outcomeRow struct {
	Outcome, Meaning string
	Rows             int
}

// outcomeTable is the rows by outcome in the taxonomy's order (an outcome
// no row has is left out; a row without one counts under its status).
func outcomeTable(a studies.Aggregates) []outcomeRow {
	var out []outcomeRow
	seen := map[string]bool{}
	for _, m := range studies.OutcomeMeanings {
		seen[m.Outcome] = true
		if n := a.Outcomes[m.Outcome]; n > 0 {
			out = append(out, outcomeRow{m.Outcome, m.Meaning, n})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.Outcomes)) {
		if !seen[k] {
			out = append(out, outcomeRow{k, "a row without an outcome, by its status", a.Outcomes[k]})
		}
	}
	return out
}
