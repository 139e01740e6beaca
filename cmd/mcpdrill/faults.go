package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/faults"
)

// faultsCommand is the `mcpdrill faults` command; run (nil: runFaults)
// prints what the parsed faultsOptions ask for.
func faultsCommand(run func(context.Context, *faultsOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "faults",
		ArgsUsage: "[NAME]",
		Usage:     "list the faults `wrap` can inject, with their parameters and defaults",
		Description: "Each fault is defined by what the client observes. Rules in a plan name a fault and may set its\n" +
			"params; the short form is --faults NAME[:PARAM=VALUE...],NAME... on `mcpdrill wrap`.",
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "write the catalogue as JSON"}},
		Action: action(parseFaultsOptions, run, runFaults),
	}
}

// faultsOptions is what one `mcpdrill faults` asks for: the catalogue as
// JSON, or one fault (nil: the table of all).
type faultsOptions struct {
	env
	json bool
	one  *faults.Spec
}

// parseFaultsOptions reads faults' flags and looks NAME up; an unknown
// fault is a usage error (--json writes the whole catalogue, NAME or not).
func parseFaultsOptions(c *cmdLine) (*faultsOptions, error) {
	o := &faultsOptions{json: c.Bool("json")}
	if c.NArg() > 1 {
		return nil, usageErr("faults: want at most one NAME")
	}
	if name := c.Args().First(); name != "" && !o.json {
		s, ok := faults.Lookup(name)
		if !ok {
			return nil, usageErr("faults: unknown fault %q (one of %s)", name, strings.Join(faults.Names(), ", "))
		}
		o.one = &s
	}
	return o, nil
}

// runFaults prints the catalogue, or one fault's parameters.
func runFaults(ctx context.Context, o *faultsOptions) error {
	w := o.stdout
	cat := faults.Catalogue()
	if o.json {
		return writeJSON(w, cat)
	}
	width := outputWidth(w)
	if s := o.one; s != nil {
		fmt.Fprintf(w, "%s\n\ndefault target: %s\n", wrap(s.Name+": "+s.Observed, width), target(*s))
		if len(s.Params) == 0 {
			fmt.Fprintln(w, "no parameters")
			return nil
		}
		g := newGrid(gridColumn{name: "param"}, gridColumn{name: "type"}, gridColumn{name: "default", label: true}, gridColumn{name: "meaning", long: true})
		for _, p := range s.Params {
			help := p.Help
			if len(p.Choices) > 0 {
				help += " (" + strings.Join(p.Choices, ", ") + ")"
			}
			g.add(p.Name, string(p.Type), p.FormatDefault(), help)
		}
		return g.render(w, width)
	}
	g := newGrid(gridColumn{name: "fault"}, gridColumn{name: "default target"}, gridColumn{name: "params (default)", long: true, label: true})
	for _, s := range cat {
		var ps []string
		for _, p := range s.Params {
			ps = append(ps, fmt.Sprintf("%s=%s", p.Name, p.FormatDefault()))
		}
		g.add(s.Name, target(s), strings.Join(ps, " "))
	}
	if err := g.render(w, width); err != nil {
		return err
	}
	// Each fault's name, then what the client observes, wrapped in a
	// column of its own.
	var b strings.Builder
	b.WriteString("\nWhat the client observes:\n")
	for _, s := range cat {
		writeWrapped(&b, s.Observed, fmt.Sprintf("  %-13s ", s.Name), strings.Repeat(" ", 16), width)
	}
	b.WriteString("\nDetails: mcpdrill faults NAME\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// target renders a fault's default matcher.
func target(s faults.Spec) string {
	out := s.Direction.String()
	if len(s.Kinds) > 0 {
		var ks []string
		for _, k := range s.Kinds {
			ks = append(ks, k.String())
		}
		out += " " + strings.Join(ks, "|")
	}
	if len(s.Methods) > 0 {
		out += " " + strings.Join(s.Methods, "|")
	}
	return out
}
