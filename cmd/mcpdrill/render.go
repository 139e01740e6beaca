package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"

	"github.com/fatih/color"

	tgt "github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// useColor is true only for a terminal and only when NO_COLOR is unset.
func useColor(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	f, ok := outputFile(w)
	return ok && isTerminal(f)
}

// painter colours text for a writer, or leaves it plain.
type painter struct{ on bool }

func newPainter(w io.Writer) painter { return painter{on: useColor(w)} }

func (p painter) paint(s string, attrs ...color.Attribute) string {
	if !p.on {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor()
	return c.Sprint(s)
}

// severity renders a severity with its colour.
func (p painter) severity(s report.Severity) string {
	switch s {
	case report.SeverityError:
		return p.paint(string(s), color.FgRed, color.Bold)
	case report.SeverityWarn:
		return p.paint(string(s), color.FgYellow)
	}
	return p.paint(string(s), color.FgCyan)
}

// writeJSON writes v as indented JSON with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	if err := jsonvalue.WriteIndented(w, v); err != nil {
		return exitErr(exitInternal, fmt.Errorf("encode JSON: %w", err))
	}
	return nil
}

// renderFindings prints findings as a table fitted to width ("No
// findings." when there are none).
func renderFindings(w io.Writer, fs []report.Finding, width int) error {
	rs := make([]report.Result, len(fs))
	for i, f := range fs {
		rs[i].Finding = f
	}
	return renderResults(w, rs, width)
}

// renderResults prints findings as a table fitted to width, with a server
// column when they come from several servers (a study), and a count line.
func renderResults(w io.Writer, rs []report.Result, width int) error {
	if len(rs) == 0 {
		fmt.Fprintln(w, "No findings.")
		return nil
	}
	servers := slices.ContainsFunc(rs, func(r report.Result) bool { return r.Subject != "" })
	p := newPainter(w)
	cols := []gridColumn{{name: "severity", painted: true}, {name: "rule"}, {name: "tool"}, {name: "message", long: true}}
	if servers {
		cols = slices.Insert(cols, 1, gridColumn{name: "server"})
	}
	g := newGrid(cols...)
	c := map[report.Severity]int{}
	for _, r := range rs {
		c[r.Severity]++
		row := []string{p.severity(r.Severity), r.Rule, r.Tool, r.Finding.Text()}
		if servers {
			row = slices.Insert(row, 1, r.Subject)
		}
		g.add(row...)
	}
	if err := g.render(w, width); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d error(s), %d warning(s), %d info\n", c[report.SeverityError], c[report.SeverityWarn], c[report.SeverityInfo])
	return nil
}

// pct renders a share as a percentage, or "n/a" (scan.Percent).
func pct(f *float64) string { return scan.Percent(f, "n/a") }

// renderPosture prints the authentication posture (names only, never
// values), fitted to width.
func renderPosture(w io.Writer, p *tgt.Posture, width int) {
	if p == nil {
		return
	}
	var b strings.Builder
	writeItems(&b, width, "", "  ", "auth posture: "+p.Verdict, fmt.Sprint(p.Target))
	presented := "no credentials configured"
	if p.AuthorizationPresented {
		presented = "headers configured: " + strings.Join(p.HeaderNames, ", ")
	}
	an := p.Anonymous
	line := fmt.Sprintf("anonymous request (%s): %s", an.Source, an.Outcome)
	if an.HTTPStatus != 0 {
		line += fmt.Sprintf(" (HTTP %d)", an.HTTPStatus)
	}
	if an.Tools != nil {
		line += fmt.Sprintf(", %d tool(s)", *an.Tools)
	}
	writeItems(&b, width, "  ", "    ", presented, line)
	if ch := p.Challenge; ch != nil {
		writeWrapped(&b, fmt.Sprintf("challenge: present %v, schemes %s, resource_metadata %v", ch.Present, orDash(strings.Join(ch.Schemes, " ")), ch.ResourceMetadata), "  ", "    ", width)
	}
	if md := p.ResourceMetadata; md != nil {
		writeWrapped(&b, fmt.Sprintf("protected-resource metadata: found %v %s, %d authorization server(s)", md.Found, md.Source, md.AuthorizationServers), "  ", "    ", width)
	}
	if o := p.Origin; o != nil {
		origin := "foreign Origin: " + o.Outcome
		if o.HTTPStatus != 0 {
			origin += fmt.Sprintf(" (HTTP %d)", o.HTTPStatus)
		}
		writeWrapped(&b, origin, "  ", "    ", width)
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

// renderInvocation prints the invocation plan and, when executed, outcomes,
// fitted to width.
func renderInvocation(w io.Writer, inv *scan.Invocation, width int) error {
	if inv == nil {
		return nil
	}
	state := "plan only, nothing sent (add --execute to send)"
	if inv.Executed {
		state = "executed"
	}
	var head strings.Builder
	writeItems(&head, width, "", "  ", "tool invocation: "+state, fmt.Sprintf("seed %d", inv.Seed), fmt.Sprint(inv.Target), "resolved against "+inv.ResolvedAgainst+" tools")
	io.WriteString(w, head.String())
	g := newGrid(gridColumn{name: "tool"}, gridColumn{name: "arguments", long: true, label: true},
		gridColumn{name: "outcome"}, gridColumn{name: "detail", long: true})
	for _, c := range inv.Calls {
		g.add(c.Tool, string(c.Arguments), c.Outcome, c.Detail)
	}
	if err := g.render(w, width); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}
