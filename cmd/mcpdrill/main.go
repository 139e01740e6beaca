// Command mcpdrill tells the people who build and depend on MCP servers
// whether a server can be trusted when it answers, and what their agent does
// when it can't: scan, wrap, drift, guard and study.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// Exit codes shared by every command.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
	// exitUnreachable is a target that could not be reached or refused the
	// protocol; exitEnvironment, the same code, is the environment's
	// refusal of anything else mcpdrill needs (a port in use). Neither is
	// the user's mistake nor mcpdrill's.
	exitUnreachable = 3
	exitEnvironment = 3
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

// exitTextWidth is how wide an exit code's meaning is made: with help's
// indentation it fits 80 columns.
const exitTextWidth = 68

// exitCodes returns a command's EXIT CODES help block: 0; 1 meaning one,
// unless one is empty (the command never exits 1); 2; 3 when the command
// reaches a server; 4.
func exitCodes(one string, reaches bool) string {
	b := "EXIT CODES:\n   0  ok\n"
	if one != "" {
		b += "   1  " + strings.Join(wrapText(one, exitTextWidth), "\n      ") + "\n"
	}
	b += "   2  usage error\n"
	if reaches {
		b += "   3  target unreachable or protocol refused (the environment, not a mistake)\n"
	}
	return b + "   4  internal error"
}

// appExitCodesHelp ends the top-level help: which code means what, and
// where each applies.
const appExitCodesHelp = `EXIT CODES (each command's help lists those it uses):
   0  ok
   1  findings: at or above --fail-on (scan, drift, study run),
      a withheld server or a changed tool set (guard)
   2  usage error: a mistyped command or flag, a bad value, a file
      that cannot be read
   3  the environment: a target unreachable or its protocol refused,
      a port in use (testbed --http, wrap --listen)
   4  internal error (a fault of mcpdrill's: please report it)
   With several servers (--config), 1 when a finding about any of
   them fails, else 3 when one could not be reached.
   wrap exits with its server's status`

// newApp is the CLI with every command.
func newApp() *cli.App { return appOf(commands()) }

// commands are mcpdrill's commands, in name order.
func commands() []*cli.Command {
	return []*cli.Command{clientCommand(nil), clientServerCommand(), completionCommand(nil), configsCommand(nil), driftCommand(nil), faultsCommand(nil), fingerprintCommand(nil),
		guardCommand(), mcpCommand(nil), rulesCommand(nil), scanCommand(nil), studyCommand(), testbedCommand(nil), versionCommand(), wrapCommand(nil)}
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
		// A first argument that is no command is a mistake to explain.
		Action: unknownCommand,
		// Header and environment values may contain commas: a repeated flag
		// is the only list separator.
		DisableSliceFlagSeparator: true,
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return explainUsage(c, err)
		},
	}
	for _, c := range app.Commands {
		explainMistakes(c, app.OnUsageError)
		refuseNegativeDurations(c)
		noHelpTopics(c)
	}
	// urfave/cli prints help through a package variable: every app of
	// this binary fits its help to the output.
	cli.HelpPrinter = printHelp
	return app
}

// proseWidth is the widest help text and other prose are made: prose
// reads best in lines of at most about 100 columns, however wide the
// terminal.
const proseWidth = 100

// flagIndent is where urfave/cli's help template starts an option's line.
const flagIndent = 3

// printHelp is urfave/cli's help printer with its text fitted to the
// output's width (outputWidth, at most proseWidth), as tables are. An
// option's usage wraps within its column: every line of it has the tab
// that aligns the column.
func printHelp(w io.Writer, templ string, data any) {
	width := min(outputWidth(w), proseWidth)
	names := 0 // the widest option name: the usage column starts after it
	if d, ok := data.(interface{ VisibleFlags() []cli.Flag }); ok {
		for _, f := range d.VisibleFlags() {
			name, _, _ := strings.Cut(f.String(), "\t")
			names = max(names, len(name))
		}
	}
	column := max(width-flagIndent-names-2, minLong) // 2: the tab's padding
	cli.HelpPrinterCustom(w, templ, data, map[string]any{
		"wrap": func(s string, offset int) string {
			if name, usage, ok := strings.Cut(s, "\t"); ok && !strings.Contains(s, "\n") {
				return name + "\t" + strings.Join(wrapText(usage, column), "\n"+strings.Repeat(" ", flagIndent)+"\t")
			}
			return reflow(s, offset, width)
		},
	})
}

// reflow fits help text that starts at column offset into width: the lines
// of a paragraph (up to a blank or an indented line) are joined and
// wrapped, and continue at offset; an indented line (an item of a list, an
// example) is kept as it is, as is anything that already fits.
func reflow(s string, offset, width int) string {
	avail := max(width-offset, minLong)
	if !strings.Contains(s, "\n") && len(s) <= avail {
		return s
	}
	pad := strings.Repeat(" ", offset)
	var out, para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, wrapText(strings.Join(para, " "), avail)...)
			para = nil
		}
	}
	for _, line := range strings.Split(s, "\n") {
		switch {
		case line == "" || line[0] == ' ':
			flush()
			out = append(out, line)
		default:
			para = append(para, line)
		}
	}
	flush()
	for i := 1; i < len(out); i++ {
		if out[i] != "" {
			out[i] = pad + out[i]
		}
	}
	return strings.Join(out, "\n")
}

// noHelpTopics takes urfave/cli's help subcommand ("help", alias "h") away
// from every command of c's tree that has no subcommands: there it would
// read a positional argument spelt h or help (a guard server id, a server
// command, a file name) as a request for help, and act on nothing. Such a
// command's help stays behind --help and -h, printed as before.
func noHelpTopics(c *cli.Command) {
	if len(c.Subcommands) == 0 {
		c.HideHelpCommand = true
		if c.CustomHelpTemplate == "" {
			c.CustomHelpTemplate = cli.CommandHelpTemplate
		}
	}
	for _, sub := range c.Subcommands {
		noHelpTopics(sub)
	}
}

// explainMistakes gives c and its subcommands onUsage for their flag
// errors, and to a command that only groups subcommands an action that
// explains a mistyped one.
func explainMistakes(c *cli.Command, onUsage cli.OnUsageErrorFunc) {
	if c.OnUsageError == nil {
		c.OnUsageError = onUsage
	}
	if c.Action == nil && len(c.Subcommands) > 0 {
		c.Action = unknownCommand
	}
	for _, sub := range c.Subcommands {
		explainMistakes(sub, onUsage)
	}
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
// (an empty message prints nothing); urfave/cli's own refusals (a help
// topic that does not exist: a cli.ExitCoder) are usage errors, its flag
// errors come through explainUsage; any other error is one no code was
// given to, so mcpdrill did not expect it: an internal error.
func execute(app *cli.App, args []string, stderr io.Writer) int {
	err := app.Run(args)
	if err == nil {
		return exitOK
	}
	code := exitInternal
	var ee *exitError
	var coder cli.ExitCoder
	switch {
	case errors.As(err, &ee):
		code, err = ee.code, ee.err
	case errors.As(err, &coder):
		code = exitUsage
	}
	if err != nil && err.Error() != "" {
		// An error may quote what a server or a file said.
		fmt.Fprintln(stderr, "mcpdrill:", safetext.Block(err.Error()))
	}
	return code
}

func main() { os.Exit(execute(newApp(), os.Args, os.Stderr)) }
