package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/outfile"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/report"
)

// expectFlags are the flags of the expected-findings gate (scan, drift,
// drift check).
func expectFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "expected-findings", Usage: "acknowledged findings `FILE`: an expected finding does not fail the run, an unexpected one does, and so does an entry no finding matches any more (stale: remove it)"},
		&cli.BoolFlag{Name: "update-expected", Usage: "rewrite --expected-findings FILE to expect this run's findings at or above --fail-on (entries that still match are kept, stale ones dropped) and exit 0"},
	}
}

// expectGate is what the expected-findings flags asked for.
type expectGate struct {
	// path is --expected-findings and file what it holds (nil: the file
	// does not exist yet, which only --update-expected allows).
	path   string
	file   *report.Expectations
	update bool
	// notes are said on stderr when the gate judges (a renamed rule id).
	notes []string
}

// parseExpectGate reads the expected-findings flags and the file they
// name; problems are usage errors. It returns nil without the flags.
func parseExpectGate(c *cmdLine) (*expectGate, error) {
	path, update := c.String("expected-findings"), c.Bool("update-expected")
	switch {
	case path == "" && update:
		return nil, usageErr("--update-expected needs --expected-findings FILE: the file to write")
	case path == "":
		return nil, nil
	}
	g := &expectGate{path: path, update: update}
	b, err := inputfile.Read(path)
	switch {
	case update && errors.Is(err, fs.ErrNotExist):
		return g, nil // a first baseline
	case err != nil:
		return nil, usageErr("--expected-findings: %v", err)
	}
	if g.file, err = report.ParseExpectations(b); err != nil {
		return nil, usageErr("--expected-findings %s: %v", path, err)
	}
	cat, err := catalogue()
	if err != nil {
		return nil, err
	}
	renamed, err := g.file.Rename(cat.Renamed())
	if err != nil {
		return nil, usageErr("--expected-findings %s: %v", path, err)
	}
	for _, i := range renamed {
		x := g.file.Findings[i]
		g.notes = append(g.notes, fmt.Sprintf("findings[%d] of %s names %s, renamed %s: read as %s (--update-expected rewrites it)",
			i, safetext.Text(path), x.Formerly(), x.Rule, x.Rule))
	}
	for i, x := range g.file.Findings {
		if _, ok := cat.Lookup(x.Rule); !ok {
			return nil, usageErr("--expected-findings %s: findings[%d]: unknown rule id %q (mcpdrill rules lists them)", path, i, x.Rule)
		}
	}
	return g, nil
}

// maxGateLines bounds the findings the gate lists on stderr; the report
// holds them all.
const maxGateLines = 20

// judge applies the gate to a run's results (their subject is the
// server's name in a --config run). established says whether a server's
// run ("": the whole run) completed: only then does a finding's absence
// make an entry stale. It marks the results the file expects, writes what
// it decided to stderr, and returns whether the run fails the gate. With
// --update-expected it writes the file instead and the run passes.
func (g *expectGate) judge(stderr io.Writer, rs []report.Result, threshold report.Severity, established func(string) bool) (bool, error) {
	for _, n := range g.notes {
		fmt.Fprintln(stderr, "mcpdrill: "+n)
	}
	if g.update {
		return false, g.rewrite(stderr, rs, threshold, established)
	}
	v := g.file.Evaluate(rs, threshold, established)
	name := safetext.Text(g.path)
	var lines []string
	for n, i := range v.Unexpected {
		if n == maxGateLines {
			lines = append(lines, fmt.Sprintf("… and %d more unexpected finding(s) (the report lists them)", len(v.Unexpected)-n))
			break
		}
		r := rs[i]
		why := "not in " + name
		if j, ok := v.Changed[i]; ok {
			why = fmt.Sprintf("changed since findings[%d] of %s acknowledged it", j, name)
		}
		lines = append(lines, fmt.Sprintf("unexpected finding (%s): %s %s", why, r.Rule, safetext.Text(r.Text())))
	}
	for _, j := range v.Stale {
		lines = append(lines, fmt.Sprintf("stale entry findings[%d] of %s: %s matches no finding any more (it passes now): remove it", j, name, safetext.Text(g.file.Findings[j].Label())))
	}
	for _, j := range v.Unsettled {
		lines = append(lines, fmt.Sprintf("entry findings[%d] of %s (%s) not judged: its server was not scanned to the end", j, name, safetext.Text(g.file.Findings[j].Label())))
	}
	lines = append(lines, fmt.Sprintf("%s: %d expected, %d unexpected, %d stale", name, len(v.Expected), len(v.Unexpected), len(v.Stale)))
	for _, l := range lines {
		fmt.Fprintln(stderr, "mcpdrill: "+l)
	}
	return v.Fails(), nil
}

// rewrite writes the file that expects the run's failing results. A run
// that did not complete would forget what it did not see: the file is left
// as it is, and the run's own exit says why.
func (g *expectGate) rewrite(stderr io.Writer, rs []report.Result, threshold report.Severity, established func(string) bool) error {
	if established != nil && !established("") {
		fmt.Fprintf(stderr, "mcpdrill: %s not updated: the run did not complete, and a file written now would drop the findings of what was not scanned\n", safetext.Text(g.path))
		return nil
	}
	next := g.file.Rebaseline(rs, threshold)
	var b bytes.Buffer
	if err := report.WriteExpectations(&b, next); err != nil {
		return exitErr(exitInternal, err)
	}
	if err := outfile.Write(g.path, b.Bytes(), 0o644); err != nil {
		return usageErr("--expected-findings: %v", err)
	}
	before := 0
	if g.file != nil {
		before = len(g.file.Findings)
	}
	fmt.Fprintf(stderr, "mcpdrill: wrote %s: %d expected finding(s) (%d before)\n", safetext.Text(g.path), len(next.Findings), before)
	return nil
}

// gateFails is the findings half of a run's exit: with an expected-findings
// gate its verdict, else whether a result is at or above the threshold.
func gateFails(g *expectGate, stderr io.Writer, rs []report.Result, threshold report.Severity, established func(string) bool) (bool, error) {
	if g != nil {
		return g.judge(stderr, rs, threshold, established)
	}
	for _, r := range rs {
		if threshold != "" && r.Severity.Rank() >= threshold.Rank() {
			return true, nil
		}
	}
	return false, nil
}
