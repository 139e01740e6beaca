package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"

	tgt "github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// useColor is true only for a terminal and only when NO_COLOR is unset.
func useColor(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap() // a maskedWriter
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
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

// newTable returns a table writing to w with the given header.
func newTable(w io.Writer, header ...string) *tablewriter.Table {
	t := tablewriter.NewWriter(w)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	t.Header(h...)
	return t
}

// writeJSON writes v as indented JSON with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return exitErr(exitInternal, fmt.Errorf("encode JSON: %w", err))
	}
	return nil
}

// renderFindings prints findings as a table (nothing when there are none).
func renderFindings(w io.Writer, fs []report.Finding) error {
	rs := make([]report.Result, len(fs))
	for i, f := range fs {
		rs[i].Finding = f
	}
	return renderResults(w, rs)
}

// renderResults prints findings as a table, with a server column when they
// come from several servers (a study), and a count line.
func renderResults(w io.Writer, rs []report.Result) error {
	if len(rs) == 0 {
		fmt.Fprintln(w, "No findings.")
		return nil
	}
	servers := slices.ContainsFunc(rs, func(r report.Result) bool { return r.Subject != "" })
	p := newPainter(w)
	header := []string{"severity", "rule", "tool", "message"}
	if servers {
		header = slices.Insert(header, 1, "server")
	}
	t := newTable(w, header...)
	c := map[report.Severity]int{}
	for _, r := range rs {
		c[r.Severity]++
		row := []any{p.severity(r.Severity), r.Rule, r.Tool, r.Finding.Text()}
		if servers {
			row = slices.Insert(row, 1, any(r.Subject))
		}
		if err := t.Append(row...); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	if err := t.Render(); err != nil {
		return exitErr(exitInternal, err)
	}
	fmt.Fprintf(w, "%d error(s), %d warning(s), %d info\n", c[report.SeverityError], c[report.SeverityWarn], c[report.SeverityInfo])
	return nil
}

// pct renders a ratio as a percentage, or "n/a".
func pct(f *float64) string {
	if f == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *f*100)
}

// renderPosture prints the authentication posture (names only, never values).
func renderPosture(w io.Writer, p *tgt.Posture) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "auth posture: %s · %s\n", p.Verdict, p.Target)
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
	fmt.Fprintf(w, "  %s · %s\n", presented, line)
	if ch := p.Challenge; ch != nil {
		fmt.Fprintf(w, "  challenge: present %v, schemes %s, resource_metadata %v\n", ch.Present, orDash(strings.Join(ch.Schemes, " ")), ch.ResourceMetadata)
	}
	if md := p.ResourceMetadata; md != nil {
		fmt.Fprintf(w, "  protected-resource metadata: found %v %s, %d authorization server(s)\n", md.Found, md.Source, md.AuthorizationServers)
	}
	if o := p.Origin; o != nil {
		fmt.Fprintf(w, "  foreign Origin: %s", o.Outcome)
		if o.HTTPStatus != 0 {
			fmt.Fprintf(w, " (HTTP %d)", o.HTTPStatus)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// renderInvocation prints the invocation plan and, when executed, outcomes.
func renderInvocation(w io.Writer, inv *scan.Invocation) error {
	if inv == nil {
		return nil
	}
	state := "plan only, nothing sent (add --execute to send)"
	if inv.Executed {
		state = "executed"
	}
	fmt.Fprintf(w, "tool invocation: %s · seed %d · %s · resolved against %s tools\n", state, inv.Seed, inv.Target, inv.ResolvedAgainst)
	t := newTable(w, "tool", "arguments", "outcome", "detail")
	for _, c := range inv.Calls {
		if err := t.Append(c.Tool, string(c.Arguments), c.Outcome, c.Detail); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	if err := t.Render(); err != nil {
		return exitErr(exitInternal, err)
	}
	fmt.Fprintln(w)
	return nil
}
