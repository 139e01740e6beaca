package pages

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/clientdrill"
	"github.com/mcpdrill/mcpdrill/studies"
)

// clientTransports are the transports a client study reports, in column
// order within a cell.
var clientTransports = []clientdrill.Transport{clientdrill.Stdio, clientdrill.HTTP}

// ClientsMarkdown writes SUMMARY.md of a client study: the clients, then
// one table per transport (scenarios × clients, each cell the observed
// verdict, a cell not run left as "–"), then how often each outcome was seen.
func ClientsMarkdown(w io.Writer, r *studies.ClientResults) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Client resilience study\n\n%d clients × %d scenarios × 2 transports, seed %d, request timeout %d ms, revision %s.\n"+
		"Every cell was observed by `mcpdrill client` (METHODOLOGY, \"The client drill\"); the evidence of each is in results.json and index.html.\n\n",
		len(r.Clients), len(r.Scenarios), r.Meta.Seed, r.Meta.TimeoutMS, r.Meta.Revision)
	b.WriteString("| client | package | version | kind | how the adapter uses it |\n|---|---|---|---|---|\n")
	for _, c := range r.Clients {
		note := c.Note
		if c.Error != "" {
			note += " **Not drilled: " + c.Error + "**"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", c.Name, c.Package, c.Version, c.Kind, mdCell(note))
	}
	for _, t := range clientTransports {
		fmt.Fprintf(&b, "\n## Over %s\n\n| scenario |", t)
		for _, c := range r.Clients {
			b.WriteString(" " + c.Name + " |")
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Clients)) + "\n")
		for _, s := range r.Scenarios {
			b.WriteString("| " + s + " |")
			for _, c := range r.Clients {
				cell := "–"
				if x, ok := c.Cell(s, t); ok {
					cell = x.Verdict()
					if !x.Expected {
						cell = "**" + cell + "**"
					}
				}
				b.WriteString(" " + cell + " |")
			}
			b.WriteString("\n")
		}
	}
	counts := map[clientdrill.Outcome]int{}
	cells, unexpected := 0, 0
	for _, c := range r.Clients {
		for _, x := range c.Results {
			counts[x.Outcome]++
			cells++
			if !x.Expected {
				unexpected++
			}
		}
	}
	fmt.Fprintf(&b, "\n## Outcomes\n\n%d cells observed, %d not the expected outcome (bold above).\n\n| outcome | cells |\n|---|---|\n", cells, unexpected)
	for _, o := range sortedOutcomes(counts) {
		fmt.Fprintf(&b, "| %s | %d |\n", o, counts[o])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedOutcomes(m map[clientdrill.Outcome]int) []clientdrill.Outcome {
	return slices.Sorted(maps.Keys(m))
}

type clientCell struct {
	Transport clientdrill.Transport
	Verdict   string
	Class     string
	Anchor    string
	Missing   bool
}

type clientPageRow struct {
	Scenario string
	Cells    [][]clientCell // per client, per transport
}

type clientEvidence struct {
	Anchor, Client, Scenario string
	R                        clientdrill.Result
}

type clientPage struct {
	R        *studies.ClientResults
	Rows     []clientPageRow
	Evidence []clientEvidence
}

func cellAnchor(client, scenario string, t clientdrill.Transport) string {
	return "e-" + client + "-" + scenario + "-" + string(t)
}

// outcomeClass colours a cell: the expected outcome, an unexpected one,
// and the two a client must never reach.
func outcomeClass(x clientdrill.Result) string {
	switch {
	case x.Outcome == clientdrill.Hung || x.Outcome == clientdrill.Crashed:
		return "bad"
	case !x.Expected:
		return "warn"
	case x.Outcome == clientdrill.NotApplicable:
		return "na"
	}
	return "ok"
}

// ClientsHTML writes the self-contained page of a client study: a table of
// scenarios × clients whose every cell links to its evidence below.
func ClientsHTML(w io.Writer, r *studies.ClientResults) error {
	p := clientPage{R: r}
	for _, s := range r.Scenarios {
		row := clientPageRow{Scenario: s}
		for _, c := range r.Clients {
			var cells []clientCell
			for _, t := range clientTransports {
				x, ok := c.Cell(s, t)
				if !ok {
					cells = append(cells, clientCell{Transport: t, Missing: true})
					continue
				}
				a := cellAnchor(c.Name, s, t)
				cells = append(cells, clientCell{Transport: t, Verdict: x.Verdict(), Class: outcomeClass(x), Anchor: a})
				p.Evidence = append(p.Evidence, clientEvidence{Anchor: a, Client: c.Name, Scenario: s, R: x})
			}
			row.Cells = append(row.Cells, cells)
		}
		p.Rows = append(p.Rows, row)
	}
	if err := clientPageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("writing the client study page: %w", err)
	}
	return nil
}

var clientPageTemplate = template.Must(template.New("clients").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mcpdrill client resilience study</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222;max-width:1380px}
table{border-collapse:collapse}
#matrix{table-layout:fixed;width:100%}
#matrix th,#matrix td{border:1px solid #ddd;padding:2px 3px;vertical-align:top;overflow-wrap:anywhere}
#matrix th.sc{width:120px;text-align:left}
#matrix thead th{font-size:11px}
#matrix td a{display:block;font-size:11px;text-decoration:none;color:inherit;border-radius:3px;padding:1px 2px;margin:1px 0}
#matrix td span.t{color:#777}
.ok{background:#e3f4e1}.warn{background:#fde9c8}.bad{background:#f7c9c9}.na{background:#eee}
#evidence td,#evidence th{border:1px solid #ddd;padding:3px 6px;vertical-align:top;text-align:left}
#evidence tr:target{outline:3px solid #3a78d8}
ul{margin:0;padding-left:16px}
</style></head><body>
<h1>What MCP clients do when the server can't be trusted</h1>
<p>{{len .R.Clients}} clients × {{len .R.Scenarios}} scenarios over stdio and Streamable HTTP, seed {{.R.Meta.Seed}}, request timeout {{.R.Meta.TimeoutMS}} ms. Each cell is the verdict <code>mcpdrill client</code> observed (outcome, then +tags seen on the wire); click it for its evidence. Green: the expected outcome; amber: another; red: hung or crashed.</p>
<table id="matrix"><thead><tr><th class="sc">scenario</th>{{range .R.Clients}}<th title="{{.Package}} {{.Version}}">{{.Name}}<br><span class="t">{{.Version}}</span></th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><th class="sc">{{.Scenario}}</th>{{range .Cells}}<td>{{range .}}{{if .Missing}}<span class="t">{{.Transport}}: –</span>{{else}}<a class="{{.Class}}" href="#{{.Anchor}}"><span class="t">{{.Transport}}</span> {{.Verdict}}</a>{{end}}{{end}}</td>{{end}}</tr>
{{end}}</tbody></table>
<h2>Clients</h2>
<table id="clients"><tr><th>client</th><th>package</th><th>kind</th><th>adapter</th></tr>
{{range .R.Clients}}<tr><td>{{.Name}}</td><td><code>{{.Package}}</code> {{.Version}}</td><td>{{.Kind}}</td><td>{{.Note}}{{if .Error}} <strong>Not drilled: {{.Error}}</strong>{{end}}</td></tr>
{{end}}</table>
<h2>Evidence</h2>
<table id="evidence"><tr><th>cell</th><th>verdict</th><th>application</th><th>process</th><th>wire from the faulted call on</th></tr>
{{range .Evidence}}<tr id="{{.Anchor}}"><td>{{.Client}}<br>{{.Scenario}}<br>{{.R.Transport}}{{if .R.Evidence.Revision}} ({{.R.Evidence.Revision}}){{end}}</td><td>{{.R.Verdict}}{{if not .R.Expected}}<br><strong>not expected</strong>{{end}}</td><td>{{.R.Evidence.App}}</td><td>{{.R.Evidence.Exit}}</td><td><ul>{{range .R.Evidence.Wire}}<li>{{.}}</li>{{end}}</ul></td></tr>
{{end}}</table>
</body></html>
`))
