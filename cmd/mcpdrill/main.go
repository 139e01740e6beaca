// Command mcpdrill tells the people who build and depend on MCP servers
// whether a server can be trusted when it answers, and what their agent does
// when it can't: scan, wrap, drift, guard and study.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
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

// exitCodesHelp is the EXIT CODES block of a command with --fail-on.
var exitCodesHelp = exitCodes("findings at or above --fail-on (default: error)", true)

// exitCodes returns a command's EXIT CODES help block: 0; 1 meaning one,
// unless one is empty (the command never exits 1); 2; 3 when the command
// reaches a server; 4.
func exitCodes(one string, reaches bool) string {
	b := "EXIT CODES:\n   0  ok\n"
	if one != "" {
		b += "   1  " + one + "\n"
	}
	b += "   2  usage error\n"
	if reaches {
		b += "   3  target unreachable or protocol refused\n"
	}
	return b + "   4  internal error"
}

// appExitCodesHelp ends the top-level help: which code means what, and
// where each applies.
const appExitCodesHelp = `EXIT CODES (each command's help lists those it uses):
   0  ok
   1  findings: at or above --fail-on (scan, drift, study run), a withheld server or a changed tool set (guard)
   2  usage error
   3  target unreachable or protocol refused
   4  internal error
   wrap exits with its server's status`

// newApp is the CLI with every command.
func newApp() *cli.App { return appOf(commands()) }

// commands are mcpdrill's commands, in name order.
func commands() []*cli.Command {
	return []*cli.Command{completionCommand(nil), configsCommand(nil), driftCommand(nil), faultsCommand(nil), fingerprintCommand(nil),
		guardCommand(), rulesCommand(nil), scanCommand(nil), studyCommand(), testbedCommand(nil), versionCommand(), wrapCommand(nil)}
}

// appOf is the CLI around cmds: the usage-error mapping and the checks
// every command's flags get.
func appOf(cmds []*cli.Command) *cli.App {
	app := &cli.App{
		Name:                  "mcpdrill",
		Usage:                 "fault-inject, scan and pin MCP servers",
		Version:               version,
		Commands:              cmds,
		CustomAppHelpTemplate: cli.AppHelpTemplate + "\n" + appExitCodesHelp + "\n",
		EnableBashCompletion:  true,
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

// execute runs app on args and maps what it returns to the exit status,
// writing the error, if any, to stderr: the one mapping from errors to exit
// codes, for main and for the tests alike. An *exitError carries its code
// (an empty message prints nothing); any other error (urfave/cli reports
// flag parsing problems as plain errors) is a usage error.
func execute(app *cli.App, args []string, stderr io.Writer) int {
	err := app.Run(args)
	if err == nil {
		return exitOK
	}
	code := exitUsage
	var ee *exitError
	if errors.As(err, &ee) {
		code, err = ee.code, ee.err
	}
	if err != nil && err.Error() != "" {
		fmt.Fprintln(stderr, "mcpdrill:", err)
	}
	return code
}

func main() { os.Exit(execute(newApp(), os.Args, os.Stderr)) }
