package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/faults"
)

func init() {
	register(&cli.Command{
		Name:  "faults",
		Usage: "list the faults `wrap` can inject, with their parameters and defaults",
		Description: "Each fault is defined by what the client observes. Rules in a plan name a fault and may set its\n" +
			"params; the short form is --faults NAME[:PARAM=VALUE...],NAME... on `mcpdrill wrap`.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "write the catalogue as JSON"},
		},
		Action: runFaults,
	})
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
	t := newTable(w, "fault", "default target", "params (default)", "what the client observes")
	for _, s := range cat {
		target := s.Direction.String()
		if len(s.Kinds) > 0 {
			var ks []string
			for _, k := range s.Kinds {
				ks = append(ks, k.String())
			}
			target += " " + strings.Join(ks, "|")
		}
		if len(s.Methods) > 0 {
			target += " " + strings.Join(s.Methods, "|")
		}
		var ps []string
		for _, p := range s.Params {
			d := p.FormatDefault()
			if len(p.Choices) > 0 {
				d += " of " + strings.Join(p.Choices, "|")
			}
			ps = append(ps, fmt.Sprintf("%s=%s", p.Name, d))
		}
		if err := t.Append(s.Name, target, strings.Join(ps, "\n"), s.Observed); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	if err := t.Render(); err != nil {
		return exitErr(exitInternal, err)
	}
	return nil
}
