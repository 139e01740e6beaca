package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/faults"
)

// faultsCommand is the `mcpdrill faults` command.
func faultsCommand() *cli.Command {
	return &cli.Command{
		Name:      "faults",
		Usage:     "list the faults `wrap` can inject, with their parameters and defaults",
		ArgsUsage: "[NAME]",
		Description: "Each fault is defined by what the client observes. Rules in a plan name a fault and may set its\n" +
			"params; the short form is --faults NAME[:PARAM=VALUE...],NAME... on `mcpdrill wrap`.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "write the catalogue as JSON"},
		},
		Action: runFaults,
	}
}

// faultJSON is the JSON form of one catalogue entry.
type faultJSON struct {
	Name      string      `json:"name"`
	Observed  string      `json:"observed"`
	Direction string      `json:"direction"`
	Kinds     []string    `json:"kinds,omitempty"`
	Methods   []string    `json:"methods,omitempty"`
	Params    []paramJSON `json:"params"`
}

type paramJSON struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Default string   `json:"default"`
	Choices []string `json:"choices,omitempty"`
	Help    string   `json:"help"`
}

func runFaults(c *cli.Context) error {
	w := c.App.Writer
	cat := faults.Catalogue()
	if c.Bool("json") {
		out := make([]faultJSON, 0, len(cat))
		for _, s := range cat {
			fj := faultJSON{Name: s.Name, Observed: s.Observed, Direction: s.Direction.String(), Methods: s.Methods, Params: []paramJSON{}}
			for _, k := range s.Kinds {
				fj.Kinds = append(fj.Kinds, k.String())
			}
			for _, p := range s.Params {
				fj.Params = append(fj.Params, paramJSON{Name: p.Name, Type: string(p.Type), Default: p.FormatDefault(), Choices: p.Choices, Help: p.Help})
			}
			out = append(out, fj)
		}
		return writeJSON(w, out)
	}
	if name := c.Args().First(); name != "" {
		s, ok := faults.Lookup(name)
		if !ok {
			return usageErr("faults: unknown fault %q (one of %s)", name, strings.Join(faults.Names(), ", "))
		}
		fmt.Fprintf(w, "%s: %s\n\ndefault target: %s\n", s.Name, s.Observed, target(s))
		if len(s.Params) == 0 {
			fmt.Fprintln(w, "no parameters")
			return nil
		}
		t := newTable(w, "param", "type", "default", "meaning")
		for _, p := range s.Params {
			help := p.Help
			if len(p.Choices) > 0 {
				help += " (" + strings.Join(p.Choices, ", ") + ")"
			}
			if err := t.Append(p.Name, string(p.Type), p.FormatDefault(), help); err != nil {
				return exitErr(exitInternal, err)
			}
		}
		if err := t.Render(); err != nil {
			return exitErr(exitInternal, err)
		}
		return nil
	}
	t := newTable(w, "fault", "default target", "params (default)")
	for _, s := range cat {
		var ps []string
		for _, p := range s.Params {
			ps = append(ps, fmt.Sprintf("%s=%s", p.Name, p.FormatDefault()))
		}
		if err := t.Append(s.Name, target(s), strings.Join(ps, " ")); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	if err := t.Render(); err != nil {
		return exitErr(exitInternal, err)
	}
	fmt.Fprintln(w, "\nWhat the client observes:")
	for _, s := range cat {
		fmt.Fprintf(w, "  %-13s %s\n", s.Name, s.Observed)
	}
	fmt.Fprintln(w, "\nDetails: mcpdrill faults NAME")
	return nil
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
