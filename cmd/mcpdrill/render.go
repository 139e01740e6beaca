package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"

	"github.com/mcpdrill/mcpdrill/report"
)

// useColor is true only for a terminal and only when NO_COLOR is unset.
func useColor(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
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
	if len(fs) == 0 {
		fmt.Fprintln(w, "No findings.")
		return nil
	}
	p := newPainter(w)
	t := newTable(w, "severity", "rule", "tool", "message")
	for _, f := range fs {
		msg := f.Message
		if f.Pointer != "" && !strings.Contains(msg, f.Pointer) {
			msg = f.Pointer + ": " + msg
		}
		if err := t.Append(p.severity(f.Severity), f.Rule, f.Tool, msg); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	if err := t.Render(); err != nil {
		return exitErr(exitInternal, err)
	}
	c := report.Count(fs)
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
