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

// help is what a command's --help says of it: its name, the shape of its
// arguments (ArgsUsage), a one-line usage and a description.
type help struct{ name, args, usage, description string }

// command declares a command in the options + run shape: h is its help,
// flags its flags, and parse then run (def when run is nil) its action.
func command[O any](h help, flags []cli.Flag, parse func(*cli.Context) (*O, error), run, def func(*cli.Context, *O) error) *cli.Command {
	return &cli.Command{Name: h.name, ArgsUsage: h.args, Usage: h.usage, Description: h.description, Flags: flags, Action: action(parse, run, def)}
}

// group declares a command that only holds subcommands.
func group(h help, subs ...*cli.Command) *cli.Command {
	return &cli.Command{Name: h.name, ArgsUsage: h.args, Usage: h.usage, Description: h.description, Subcommands: subs}
}

// noArguments refuses, as a usage error, any argument given to a command
// that takes flags only.
func noArguments(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("%s takes no arguments, got %q", strings.TrimPrefix(c.Command.HelpName, c.App.Name+" "), c.Args().First())
	}
	return nil
}
