// Command mcpdrill tells the people who build and depend on MCP servers
// whether a server can be trusted when it answers, and what their agent does
// when it can't: scan, wrap, drift, guard and study.
package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v2"
)

// Exit codes shared by every command.
const (
	exitOK          = 0
	exitFindings    = 1
	exitUsage       = 2
	exitUnreachable = 3
	exitInternal    = 4
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// commands is filled by each command's file in its init function, so that
// commands can be added without editing this file.
var commands []*cli.Command

func register(c *cli.Command) { commands = append(commands, c) }

// exitError carries an exit code through urfave/cli.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitErr wraps err with an exit code; a nil err gives a silent exit.
func exitErr(code int, err error) error { return &exitError{code: code, err: err} }

// usageErr is a user mistake: exit 2.
func usageErr(format string, a ...any) error {
	return exitErr(exitUsage, fmt.Errorf(format, a...))
}

const exitCodesHelp = `EXIT CODES:
   0  ok
   1  findings at or above --fail-on (default: error)
   2  usage error
   3  target unreachable or protocol refused
   4  internal error`

func newApp() *cli.App {
	slices.SortFunc(commands, func(a, b *cli.Command) int { return cmp.Compare(a.Name, b.Name) })
	app := &cli.App{
		Name:                  "mcpdrill",
		Usage:                 "fault-inject, scan and pin MCP servers",
		Version:               version,
		Commands:              commands,
		CustomAppHelpTemplate: cli.AppHelpTemplate + "\n" + exitCodesHelp + "\n",
		ExitErrHandler:        func(*cli.Context, error) {},
		// Header and environment values may contain commas: a repeated flag
		// is the only list separator.
		DisableSliceFlagSeparator: true,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return exitErr(exitUsage, err)
		},
	}
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = app.OnUsageError
		}
		refuseNegativeDurations(c)
	}
	return app
}

// refuseNegativeDurations makes every duration flag of c and its
// subcommands refuse a negative value with a usage error.
func refuseNegativeDurations(c *cli.Command) {
	for _, f := range c.Flags {
		if d, ok := f.(*cli.DurationFlag); ok && d.Action == nil {
			name := d.Name
			d.Action = func(_ *cli.Context, v time.Duration) error {
				if v < 0 {
					return usageErr("--%s must not be negative", name)
				}
				return nil
			}
		}
	}
	for _, sub := range c.Subcommands {
		refuseNegativeDurations(sub)
	}
}

// run executes the CLI and returns the process exit code.
func run(args []string) int {
	err := newApp().Run(args)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(os.Stderr, "mcpdrill:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "mcpdrill:", err)
	// urfave/cli reports flag parsing problems as plain errors.
	return exitUsage
}

func main() { os.Exit(run(os.Args)) }
