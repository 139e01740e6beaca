package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
	"github.com/mcpdrill/mcpdrill/studies"
)

// ruleCatalogues are merged by "mcpdrill rules". A package that adds rules
// adds its catalogue here.
var ruleCatalogues = []func() report.Catalogue{scan.Catalogue, drift.Catalogue, guard.Catalogue, studies.Catalogue}

// rulesCommand is the `mcpdrill rules` command.
func rulesCommand() *cli.Command {
	return &cli.Command{
		Name:      "rules",
		Usage:     "list the stable rule ids, or explain one",
		ArgsUsage: "[ID]",
		Description: `Without ID, lists every rule id with its default severity and title. With ID, explains it.
A reported change id such as CHG-PROPERTY-REMOVED-1a2b3c4d is explained by its kind
(CHG-PROPERTY-REMOVED).

` + exitCodes("", false),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "write the catalogue (or the rule) as JSON"},
			&cli.StringFlag{Name: "requirements", Usage: "list the specification requirements of revision `REV` (" + strings.Join(scan.RequirementRevisions(), ", ") + ") with their section and the rules that grade them, or why none does"},
		},
		Action: rulesAction,
	}
}

func allRules() (report.Catalogue, error) {
	cs := make([]report.Catalogue, len(ruleCatalogues))
	for i, f := range ruleCatalogues {
		cs[i] = f()
	}
	return report.Merge(cs...)
}

func rulesAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErr("want at most one rule ID")
	}
	if c.IsSet("requirements") {
		if c.NArg() > 0 {
			return usageErr("--requirements takes no rule ID")
		}
		return requirementsAction(c, c.String("requirements"))
	}
	cat, err := allRules()
	if err != nil {
		return exitErr(exitInternal, err)
	}
	w := c.App.Writer
	if c.NArg() == 0 {
		if c.Bool("json") {
			return writeJSON(w, cat)
		}
		return renderRules(w, cat)
	}
	id := c.Args().First()
	r, ok := cat.Lookup(id)
	if !ok {
		r, ok = cat.Lookup(drift.KindOf(id))
	}
	if !ok {
		return usageErr("unknown rule id %q (mcpdrill rules lists them)", id)
	}
	if c.Bool("json") {
		return writeJSON(w, r)
	}
	p := newPainter(w)
	fmt.Fprintf(w, "%s  %s\n%s\n\n%s\n", p.paint(r.ID, 1), p.severity(r.Severity), r.Title, wrap(r.Detail, 96))
	return nil
}

func renderRules(w io.Writer, cat report.Catalogue) error {
	p := newPainter(w)
	t := newTable(w, "id", "severity", "title")
	for _, r := range cat {
		if err := t.Append(r.ID, p.severity(r.Severity), r.Title); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	if err := t.Render(); err != nil {
		return exitErr(exitInternal, err)
	}
	fmt.Fprintf(w, "%d rules; mcpdrill rules ID explains one\n", len(cat))
	return nil
}

// requirementsAction prints the requirements table of one revision.
func requirementsAction(c *cli.Context, rev string) error {
	reqs := scan.Requirements(rev)
	if len(reqs) == 0 {
		return usageErr("no requirements for revision %q (known: %s)", rev, strings.Join(scan.RequirementRevisions(), ", "))
	}
	w := c.App.Writer
	if c.Bool("json") {
		return writeJSON(w, reqs)
	}
	t := newTable(w, "id", "level", "section", "graded by / reason", "requirement")
	counts := map[string]int{}
	graded := 0
	for _, q := range reqs {
		by := strings.Join(q.Checks, " ")
		if by == "" {
			by = "(" + q.Reason + ")"
			counts[q.Reason]++
		} else {
			graded++
		}
		if err := t.Append(q.ID, q.Level, q.Section, by, q.Summary); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	if err := t.Render(); err != nil {
		return exitErr(exitInternal, err)
	}
	fmt.Fprintf(w, "%d requirements for %s: %d graded", len(reqs), rev, graded)
	for _, reason := range []string{scan.UngradedNotImplemented, scan.UngradedNeedsInvoke, scan.UngradedClientFeature, scan.UngradedNotObservable} {
		fmt.Fprintf(w, ", %d %s", counts[reason], reason)
	}
	fmt.Fprintln(w)
	return nil
}

// wrap breaks text at spaces so lines stay under width.
func wrap(s string, width int) string { return strings.Join(wrapText(s, width), "\n") }
