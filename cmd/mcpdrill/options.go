package main

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// env is what a run takes of its process besides its options: its standard
// streams, whether its output is a terminal, its clock and its environment
// variables. envOf builds it once, where the flags are bound; a test builds
// its own and calls a run without urfave/cli.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// stderrTTY reports whether stderr is a terminal (renderers decide
	// stdout's width and colour from the writer itself).
	stderrTTY bool
	// now is the clock (time.Now).
	now func() time.Time
	// lookupEnv reads an environment variable (os.LookupEnv).
	lookupEnv func(string) (string, bool)
}

// envOf is the env of the command line c: the app's reader and writers,
// the process's clock and environment.
func envOf(c *cli.Context) env {
	e := env{stdin: c.App.Reader, stdout: c.App.Writer, stderr: c.App.ErrWriter, now: time.Now, lookupEnv: os.LookupEnv}
	if f, ok := outputFile(e.stderr); ok {
		e.stderrTTY = isTerminal(f)
	}
	return e
}

// getenv is the environment variable name, "" when unset.
func (e *env) getenv(name string) string {
	v, _ := e.lookupEnv(name)
	return v
}

// bindEnv gives the options of a run their env.
func (e *env) bindEnv(x env) { *e = x }

// options are a command's options: they embed their env.
type options[O any] interface {
	*O
	bindEnv(env)
}

// cmdLine is a command line as a command's parse reads it: the values
// urfave/cli bound to its flags, by name, its arguments, the context it
// runs in and the env its run will get. Parsers and their helpers see the
// CLI library through it only.
type cmdLine struct {
	env
	ctx context.Context
	cli *cli.Context
}

// newCmdLine is c as a parse reads it; its env is built once, here.
func newCmdLine(c *cli.Context) *cmdLine {
	return &cmdLine{env: envOf(c), ctx: c.Context, cli: c}
}

// String is the value of the string flag name.
func (l *cmdLine) String(name string) string { return l.cli.String(name) }

// StringSlice is the values of the repeatable flag name.
func (l *cmdLine) StringSlice(name string) []string { return l.cli.StringSlice(name) }

// Bool is the value of the boolean flag name.
func (l *cmdLine) Bool(name string) bool { return l.cli.Bool(name) }

// Int is the value of the integer flag name.
func (l *cmdLine) Int(name string) int { return l.cli.Int(name) }

// Int64 is the value of the 64-bit integer flag name.
func (l *cmdLine) Int64(name string) int64 { return l.cli.Int64(name) }

// Uint64 is the value of the unsigned integer flag name.
func (l *cmdLine) Uint64(name string) uint64 { return l.cli.Uint64(name) }

// Float64 is the value of the number flag name.
func (l *cmdLine) Float64(name string) float64 { return l.cli.Float64(name) }

// Duration is the value of the duration flag name.
func (l *cmdLine) Duration(name string) time.Duration { return l.cli.Duration(name) }

// IsSet reports whether the flag name was given.
func (l *cmdLine) IsSet(name string) bool { return l.cli.IsSet(name) }

// Args is the positional arguments as urfave/cli left them (see
// interspersed for flags among them).
func (l *cmdLine) Args() cli.Args { return l.cli.Args() }

// NArg is the number of positional arguments.
func (l *cmdLine) NArg() int { return l.cli.NArg() }

// commandName is the command's name below the app's ("drift check").
func (l *cmdLine) commandName() string {
	return strings.TrimPrefix(l.cli.Command.HelpName, l.cli.App.Name+" ")
}

// action is the Action of a command in the options + run shape: parse
// reads the command line into options (its problems are usage errors,
// found before anything runs), the options get the command line's env,
// then run does the work within the command line's context; a nil run is
// def, the command's own. A test passes its own run to see what an argv
// asks for without running anything.
func action[O any, P options[O]](parse func(*cmdLine) (P, error), run, def func(context.Context, P) error) cli.ActionFunc {
	if run == nil {
		run = def
	}
	return func(c *cli.Context) error {
		l := newCmdLine(c)
		o, err := parse(l)
		if err != nil {
			return err
		}
		o.bindEnv(l.env)
		return run(l.ctx, o)
	}
}

// noArguments refuses, as a usage error, any argument given to a command
// that takes flags only.
func noArguments(c *cmdLine) error {
	if c.NArg() > 0 {
		return usageErr("%s takes no arguments, got %q", c.commandName(), c.Args().First())
	}
	return nil
}
