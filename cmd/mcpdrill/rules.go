package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/clientdrill"
	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
	"github.com/mcpdrill/mcpdrill/studies"
)

// ruleCatalogues are merged by "mcpdrill rules". A package that adds rules
// adds its catalogue here.
var ruleCatalogues = []func() report.Catalogue{clientdrill.RulesCatalogue, scan.Catalogue, drift.Catalogue, guard.Catalogue, studies.Catalogue}

// rulesCommand is the `mcpdrill rules` command; run (nil: runRules)
// prints what the parsed rulesOptions ask for.
func rulesCommand(run func(context.Context, *rulesOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "rules",
		ArgsUsage: "[ID]",
		Usage:     "list the stable rule ids, or explain one",
		Description: `Without ID, lists every rule id with its severity and title: the default first, then any
other a finding of the rule may be graded by what the scan finds (error/warn/info: error by
default, warn or info in the cases the rule's text names). With ID, explains it; an id a rule
had before it was renamed explains the rule.
A reported change id such as CHG-PROPERTY-REMOVED-1a2b3c4d is explained by its kind
(CHG-PROPERTY-REMOVED).

` + exitCodes("", false),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "write the catalogue (or the rule) as JSON"},
			&cli.StringFlag{Name: "requirements", Usage: "list the specification requirements of revision `REV` (" + strings.Join(scan.RequirementRevisions(), ", ") + ") with their section and the rules that grade them, or why none does"},
		},
		Action: action(parseRulesOptions, run, runRules),
	}
}

// rulesOptions is what one `mcpdrill rules` asks for: the catalogue, one
// rule of it, or one revision's requirements.
type rulesOptions struct {
	env
	json bool
	// cat is the merged catalogue and rule ID's entry (nil: all).
	cat  report.Catalogue
	rule *report.Rule
	// rev is --requirements ("": none) and reqs its requirements.
	rev  string
	reqs []scan.Requirement
	// renamedFrom is the older id the rule was asked by ("": its own).
	renamedFrom string
}

// parseRulesOptions reads rules' flags and looks up the rule or the
// revision; an unknown one is a usage error.
func parseRulesOptions(c *cmdLine) (*rulesOptions, error) {
	o := &rulesOptions{json: c.Bool("json")}
	if c.NArg() > 1 {
		return nil, usageErr("want at most one rule ID")
	}
	if c.IsSet("requirements") {
		if c.NArg() > 0 {
			return nil, usageErr("--requirements takes no rule ID")
		}
		o.rev = c.String("requirements")
		if o.reqs = scan.Requirements(o.rev); len(o.reqs) == 0 {
			return nil, usageErr("no requirements for revision %q (known: %s)", o.rev, strings.Join(scan.RequirementRevisions(), ", "))
		}
		return o, nil
	}
	cat, err := allRules()
	if err != nil {
		return nil, exitErr(exitInternal, err)
	}
	o.cat = cat
	if c.NArg() == 0 {
		return o, nil
	}
	id := c.Args().First()
	r, ok := cat.Lookup(id)
	if !ok {
		r, ok = cat.Lookup(drift.KindOf(id))
	}
	if ok && !strings.EqualFold(r.ID, id) && !strings.EqualFold(r.ID, drift.KindOf(id)) {
		o.renamedFrom = strings.ToUpper(id)
	}
	if !ok {
		return nil, usageErr("unknown rule id %q%s (mcpdrill rules lists them)", id, didYouMean(nearest(id, cat.IDs())))
	}
	o.rule = &r
	return o, nil
}

func allRules() (report.Catalogue, error) {
	cs := make([]report.Catalogue, len(ruleCatalogues))
	for i, f := range ruleCatalogues {
		cs[i] = f()
	}
	return report.Merge(cs...)
}

// runRules prints the catalogue, a rule or a revision's requirements.
func runRules(ctx context.Context, o *rulesOptions) error {
	w := o.stdout
	width := outputWidth(w)
	switch {
	case o.rev != "":
		return writeRequirements(w, o.rev, o.reqs, o.json, width)
	case o.rule == nil && o.json:
		return writeJSON(w, o.cat)
	case o.rule == nil:
		return renderRules(w, o.cat, width)
	case o.json:
		return writeJSON(w, o.rule)
	}
	r, p := o.rule, newPainter(w)
	text := min(width, proseWidth)
	if o.renamedFrom != "" {
		fmt.Fprintf(w, "%s was renamed %s:\n\n", o.renamedFrom, r.ID)
	}
	fmt.Fprintf(w, "%s  %s\n%s\n\n%s\n", p.paint(r.ID, 1), severityText(p, *r), wrap(r.Title, text), wrap(r.Detail, text))
	if len(r.Graded) > 0 {
		fmt.Fprintf(w, "\n%s\n", wrap(fmt.Sprintf("severity: %s by default; a finding may be graded %s by what the scan found (the text above says when; METHODOLOGY.md, Part I §4, severity ladder: a refusal in another form is a warning, what the negotiated revision does not ask for is advice).", r.Severity, r.SeverityText()), text))
	}
	if len(r.Requirements) > 0 {
		var b strings.Builder
		b.WriteString("\ngrades:\n")
		for _, q := range r.Requirements {
			writeWrapped(&b, q.String(), "  ", "    ", text)
		}
		io.WriteString(w, b.String())
	}
	return nil
}

// renderRules writes the catalogue fitted to width.
func renderRules(w io.Writer, cat report.Catalogue, width int) error {
	p := newPainter(w)
	g := newGrid(gridColumn{name: "id"}, gridColumn{name: "severity", painted: true}, gridColumn{name: "title", long: true})
	for _, r := range cat {
		g.add(r.ID, severityText(p, r), r.Title)
	}
	if err := g.render(w, width); err != nil {
		return err
	}
	fmt.Fprintln(w, wrap(fmt.Sprintf("%d rules; mcpdrill rules ID explains one (severity a/b: a by default, b by what the scan finds)", len(cat)), width))
	return nil
}

// severityText shows a rule's severity: its default, painted, or every
// severity it grades ("error/warn/info", the default first painted).
func severityText(p painter, r report.Rule) string {
	parts := []string{p.severity(r.Severity)}
	for _, s := range r.Severities() {
		if s != r.Severity {
			parts = append(parts, string(s))
		}
	}
	return strings.Join(parts, "/")
}

// writeRequirements writes the requirements of revision rev, as JSON or
// as a table fitted to width.
func writeRequirements(w io.Writer, rev string, reqs []scan.Requirement, asJSON bool, width int) error {
	if asJSON {
		return writeJSON(w, reqs)
	}
	g := newGrid(gridColumn{name: "id"}, gridColumn{name: "level"}, gridColumn{name: "section"},
		gridColumn{name: "graded by / reason", long: true, label: true}, gridColumn{name: "requirement", long: true, label: true})
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
		g.add(q.ID, q.Level, q.Section, by, q.Summary)
	}
	if err := g.render(w, width); err != nil {
		return err
	}
	sum := fmt.Sprintf("%d requirements for %s: %d graded", len(reqs), rev, graded)
	for _, reason := range []string{scan.UngradedNotImplemented, scan.UngradedNeedsInvoke, scan.UngradedClientFeature, scan.UngradedNotObservable} {
		sum += fmt.Sprintf(", %d %s", counts[reason], reason)
	}
	fmt.Fprintln(w, wrap(sum, width))
	return nil
}

// wrap breaks text at spaces so lines stay under width.
func wrap(s string, width int) string { return strings.Join(wrapText(s, width), "\n") }
