package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed applies flags that follow the positional arguments (urfave/cli
// stops parsing at the first positional one), so that both
// `study run -o r.json servers.json` and `study run servers.json -o r.json`
// (or `drift MANIFEST --url U`) work; it returns the positional arguments,
// those after "--" last and taken as they are. When urfave/cli itself took
// a "--" (one before every positional argument), all of them are taken as
// they are: `guard quarantine -- -x` names the server -x, which is then
// refused as an id, and never reads as a flag. A help flag among them
// shows the command's help and stops the command (exit 0) before it acts.
func interspersed(c *cmdLine) ([]string, error) {
	in := c.Args().Slice()
	if dashed(c.cli) {
		return in, nil
	}
	var pos []string
	for i := 0; i < len(in); i++ {
		a := in[i]
		if a == "--" {
			pos = append(pos, in[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || negativeNumber(a) {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var def cli.Flag
		for _, f := range c.cli.Command.Flags {
			for _, n := range f.Names() {
				if n == name {
					def = f
				}
			}
		}
		if def == nil {
			return nil, usageErr("flag provided but not defined: -%s", name)
		}
		if def == cli.HelpFlag {
			_ = cli.ShowSubcommandHelp(c.cli)
			return nil, exitErr(exitOK, nil)
		}
		if _, isBool := def.(*cli.BoolFlag); isBool {
			if !hasValue {
				value = "true"
			}
		} else if !hasValue {
			if i+1 >= len(in) {
				return nil, usageErr("flag needs an argument: -%s", name)
			}
			i++
			value = in[i]
		}
		if err := c.cli.Set(def.Names()[0], value); err != nil {
			return nil, usageErr("invalid value %q for flag -%s: %v", value, name, err)
		}
	}
	return pos, nil
}

// negativeNumber reports whether a is a negative number (-1, -0.5, -1e3):
// a positional argument, never a flag (no flag's name is a number).
func negativeNumber(a string) bool {
	if len(a) < 2 || a[0] != '-' || (a[1] < '0' || a[1] > '9') && a[1] != '.' {
		return false
	}
	_, err := strconv.ParseFloat(a, 64)
	return err == nil
}

// dashed reports whether urfave/cli ended c's flags at a "--" right before
// c's positional arguments (and took it away). The parent command's
// arguments hold c's own as they were typed: c's name, its flags, then
// the rest.
func dashed(c *cli.Context) bool {
	lin := c.Lineage()
	if len(lin) < 2 {
		return false
	}
	raw, n := lin[1].Args().Slice(), c.Args().Len()
	i := len(raw) - n - 1
	return i >= 1 && raw[i] == "--"
}
