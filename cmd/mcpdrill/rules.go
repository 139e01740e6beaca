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

func init() {
	register(&cli.Command{
		Name:      "rules",
		Usage:     "list the stable rule ids, or explain one",
		ArgsUsage: "[ID]",
		Description: `Without ID, lists every rule id with its default severity and title. With ID, explains it.
A reported change id such as CHG-PROPERTY-REMOVED-1a2b3c4d is explained by its kind
(CHG-PROPERTY-REMOVED).

` + exitCodes("", false),
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "write the catalogue (or the rule) as JSON"}},
		Action: rulesAction,
	})
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

// wrap breaks text at spaces so lines stay under width.
func wrap(s string, width int) string { return strings.Join(wrapText(s, width), "\n") }
