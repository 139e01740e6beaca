package studies

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// pct formats a share in [0,1] as a percentage with one decimal; nil is "–".
func pct(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", *p*100)
}

func sortedCounts(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return out
}

// mdCell escapes a value for a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	return s
}

// tiers counts a row's tools per output-contract tier.
func tiers(r Row) (none, vac, part, enf, inv int) {
	for _, t := range r.Tools {
		switch t.OutputContract {
		case "enforceable":
			enf++
		case "partial":
			part++
		case "vacuous":
			vac++
		case "invalid":
			inv++
		default:
			none++
		}
	}
	return
}

// probeCell abbreviates a row's probe verdicts, e.g. "j/t/t".
func probeCell(r Row) string {
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
func Markdown(w io.Writer, r *Results) error {
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

	if a.Variants > 0 {
		fmt.Fprintf(&b, "%d scanned rows are transport variants of another row (`variant_of`): they are listed and their probes tallied, but they are left out of the weighted figures.\n\n", a.Variants)
	}
	b.WriteString("## Output contracts\n\n")
	b.WriteString("Tool-weighted pools every tool of every scanned server; server-weighted is the mean of each server's shares (servers with at least one tool). " +
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

	b.WriteString("## Error handling\n\n")
	fmt.Fprintf(&b, "%d of %d servers refused every probe visibly (JSON-RPC error, isError or HTTP error); %d of %d answered every probe as their protocol revision asks. Mean error handling %s, mean error conformance %s.\n\n",
		sw.AllErrorsHandled, sw.ErrorsMeasured, sw.AllErrorsConformant, sw.ErrorsMeasured, pct(sw.ErrorHandling), pct(sw.ErrorConformance))
	if len(a.Probes) > 0 {
		b.WriteString("| probe | verdicts | conformant |\n|---|---|---|\n")
		names := make([]string, 0, len(a.Probes))
		for k := range a.Probes {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, n := range names {
			t := a.Probes[n]
			fmt.Fprintf(&b, "| %s | %s | %d/%d |\n", mdCell(n), strings.Join(sortedCounts(t.Verdicts), ", "), t.Conformant, t.Ran)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Mean specification conformance (checks passed of checks decided): %s.\n\n", pct(sw.SpecConformance))

	b.WriteString("## Population\n\n")
	fmt.Fprintf(&b, "- Negotiated revisions: %s\n", orNone(sortedCounts(a.Revisions)))
	fmt.Fprintf(&b, "- Transports: %s\n", orNone(sortedCounts(a.Transports)))
	fmt.Fprintf(&b, "- SDKs (as declared in servers.json): %s\n", orNone(sortedCounts(a.SDKs)))
	if a.Failed > 0 {
		fmt.Fprintf(&b, "- Failures: %s\n", orNone(sortedCounts(a.Failures)))
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
			leaf, errc, spec = row.Scores.LeafRate, row.Scores.ErrorConformance, row.Scores.SpecConformance
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %d/%d/%d/%d/%d | %s | %s | %s | %s |\n",
			mdCell(row.Name), mdCell(orDash(row.Package)), mdCell(orDash(row.SDK)), status, rev, len(row.Tools),
			none, vac, part, enf, inv, pct(leaf), probeCell(row), pct(errc), pct(spec))
	}
	var failed []Row
	for _, row := range r.Servers {
		if row.Status != StatusScanned {
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
			fmt.Fprintf(&b, "- **%s** (%s): %s\n", mdCell(row.Name), kind, mdCell(row.Reason))
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
