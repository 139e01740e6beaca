package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// action is the Action of a command in the options + run shape: parse
// reads the flags and arguments into options (its problems are usage
// errors, found before anything runs), then run does the work; a nil run
// is def, the command's own. A test passes its own run to see what an argv
// asks for without running anything.
func action[O any](parse func(*cli.Context) (*O, error), run, def func(*cli.Context, *O) error) cli.ActionFunc {
	if run == nil {
		run = def
	}
	return func(c *cli.Context) error {
		o, err := parse(c)
		if err != nil {
			return err
		}
		return run(c, o)
	}
}

// noArguments refuses, as a usage error, any argument given to a command
// that takes flags only.
func noArguments(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("%s takes no arguments, got %q", strings.TrimPrefix(c.Command.HelpName, c.App.Name+" "), c.Args().First())
	}
	return nil
}
