package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestInterspersed(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		pos     []string
		url     string
		headers []string
		quiet   bool
		errHas  string
	}{
		{name: "flags before", args: []string{"--url", "U", "m.json"}, pos: []string{"m.json"}, url: "U"},
		{name: "flags after", args: []string{"m.json", "--url", "U", "-q"}, pos: []string{"m.json"}, url: "U", quiet: true},
		{name: "equals form", args: []string{"m.json", "--url=U=V", "--quiet=false"}, pos: []string{"m.json"}, url: "U=V"},
		{name: "slice appends", args: []string{"--header", "A=1", "m.json", "--header", "B=2"}, pos: []string{"m.json"}, headers: []string{"A=1", "B=2"}},
		{name: "command after dashes kept whole", args: []string{"m.json", "--url", "U", "--", "srv", "--url", "x"}, pos: []string{"m.json", "srv", "--url", "x"}, url: "U"},
		{name: "several positionals", args: []string{"a", "-q", "b", "-"}, pos: []string{"a", "b", "-"}, quiet: true},
		{name: "negative number after a positional", args: []string{"m.json", "-1", "-q"}, pos: []string{"m.json", "-1"}, quiet: true},
		{name: "negative numbers", args: []string{"m.json", "-2.5", "--url", "U", "-1e3", "-.5"}, pos: []string{"m.json", "-2.5", "-1e3", "-.5"}, url: "U"},
		{name: "negative number after dashes", args: []string{"--", "-1", "--url"}, pos: []string{"-1", "--url"}},
		{name: "negative number as a value", args: []string{"m.json", "--url", "-7"}, pos: []string{"m.json"}, url: "-7"},
		{name: "a dash and a letter is a flag", args: []string{"m.json", "-1x"}, errHas: "not defined: -1x"},
		{name: "unknown flag", args: []string{"m.json", "--nope"}, errHas: "not defined: -nope"},
		{name: "missing value", args: []string{"m.json", "--url"}, errHas: "needs an argument: -url"},
		{name: "bad value", args: []string{"m.json", "--quiet=maybe"}, errHas: "invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pos []string
			var url string
			var headers []string
			var quiet bool
			var perr error
			app := &cli.App{Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{{
				Name: "x",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "url"},
					&cli.StringSliceFlag{Name: "header"},
					&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}},
				},
				Action: func(c *cli.Context) error {
					pos, perr = interspersed(newCmdLine(c))
					url, headers, quiet = c.String("url"), c.StringSlice("header"), c.Bool("quiet")
					return nil
				},
			}}}
			if err := app.Run(append([]string{"mcpdrill", "x"}, tt.args...)); err != nil {
				t.Fatalf("run: %v", err)
			}
			if tt.errHas != "" {
				if perr == nil || !strings.Contains(perr.Error(), tt.errHas) {
					t.Fatalf("error = %v, want one containing %q", perr, tt.errHas)
				}
				return
			}
			if perr != nil {
				t.Fatalf("interspersed: %v", perr)
			}
			if !slices.Equal(pos, tt.pos) || url != tt.url || !slices.Equal(headers, tt.headers) || quiet != tt.quiet {
				t.Errorf("got pos %q url %q headers %q quiet %v, want %q %q %q %v", pos, url, headers, quiet, tt.pos, tt.url, tt.headers, tt.quiet)
			}
		})
	}
}

// TestNegativeNumberFirst: urfave/cli reads a negative number before the
// first positional argument as a flag; the usage error says how to pass it.
func TestNegativeNumberFirst(t *testing.T) {
	code, _, stderr := runCLI(t, "drift", "-1", "--url", "http://127.0.0.1:1/mcp")
	if code != exitUsage || !strings.Contains(stderr, "put -- before the arguments") {
		t.Errorf("exit %d, stderr %q; want a usage error that names --", code, stderr)
	}
}
