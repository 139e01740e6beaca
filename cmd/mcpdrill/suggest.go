package main

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
)

// nearest is the candidate closest to typed, or "" when none is close: an
// edit distance (insertions, deletions, substitutions and swaps of two
// neighbours) of at most 1 for a word of up to 4 letters and 2 beyond, or
// typed a prefix of exactly one candidate (3 letters at least). Ties go
// to the first candidate.
func nearest(typed string, candidates []string) string {
	typed = strings.ToLower(typed)
	limit := 1
	if len(typed) > 4 {
		limit = 2
	}
	best, bestDist := "", limit+1
	var prefixed []string
	for _, c := range candidates {
		if d := editDistance(typed, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
		if len(typed) >= 3 && strings.HasPrefix(strings.ToLower(c), typed) {
			prefixed = append(prefixed, c)
		}
	}
	if best == "" && len(prefixed) == 1 {
		return prefixed[0]
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b: the
// fewest insertions, deletions, substitutions and swaps of neighbouring
// bytes that turn a into b. Both are short (a command or a flag name); a
// typed word longer than 64 bytes is far from every name.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// didYouMean words a suggestion for a message ("" for none).
func didYouMean(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %s?", s)
}

// unknownCommand is the Action of the app and of each command that has
// subcommands and no work of its own: without an argument it prints the
// help; an argument is a command that does not exist, a usage error that
// suggests the nearest one.
func unknownCommand(c *cli.Context) error {
	root := c.Command == nil || c.Command.Name == "" || c.Command.Name == c.App.Name
	if c.NArg() == 0 {
		if root {
			return cli.ShowAppHelp(c)
		}
		return cli.ShowSubcommandHelp(c)
	}
	typed := c.Args().First()
	var names []string
	subs := c.App.Commands
	if !root {
		subs = c.Command.Subcommands
	}
	for _, cmd := range subs {
		if !cmd.Hidden {
			names = append(names, cmd.Names()...)
		}
	}
	help := c.App.Name + " --help"
	if !root {
		help = c.Command.HelpName + " --help"
	}
	s := nearest(typed, names)
	if s != "" {
		s = "`" + strings.TrimSpace(strings.TrimSuffix(help, "--help")+s) + "`"
	}
	return usageErr("unknown command %q%s (%s lists the commands)", typed, didYouMean(s), help)
}

// Messages of the standard flag package, which urfave/cli passes on.
var (
	flagUndefined   = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	flagBadValue    = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]+): (.*)$`)
	flagNeedsValue  = regexp.MustCompile(`^flag needs an argument: -+(.+)$`)
	durationNumeral = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

// explainUsage words a flag-parsing error of command c for the user: an
// unknown flag with the nearest known one, a duration without a unit with
// the unit it probably lacks, a flag without its value. Anything else is
// returned as it is. Every one is a usage error.
func explainUsage(c *cli.Context, err error) error {
	msg := err.Error()
	help := c.App.Name + " --help"
	var flags []cli.Flag
	if c.Command != nil {
		flags = c.Command.Flags
		if c.Command.HelpName != "" {
			help = c.Command.HelpName + " --help"
		}
	}
	switch {
	case flagUndefined.MatchString(msg):
		name := flagUndefined.FindStringSubmatch(msg)[1]
		if negativeNumber("-" + name) {
			// urfave/cli reads flags up to the first positional argument.
			return usageErr("-%s before the first argument reads as a flag: put -- before the arguments, or a flag or another argument first", name)
		}
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		s := nearest(name, append(names, "help"))
		if s != "" {
			s = flagText(s)
		}
		return usageErr("unknown flag %s%s (%s lists the flags)", flagText(name), didYouMean(s), help)
	case flagBadValue.MatchString(msg):
		m := flagBadValue.FindStringSubmatch(msg)
		value, name := m[1], m[2]
		if f := flagNamed(flags, name); f != nil {
			if _, ok := f.(*cli.DurationFlag); ok {
				if durationNumeral.MatchString(value) {
					return usageErr("%s %s: a duration needs a unit: %ss? (ns, us, ms, s, m, h; 1m30s)", flagText(name), value, value)
				}
				return usageErr("%s %q: not a duration (want a number and a unit, such as 10s, 500ms or 2m)", flagText(name), value)
			}
			if _, ok := f.(*cli.BoolFlag); ok {
				return usageErr("%s takes no value (%s=false to turn it off), got %q", flagText(name), flagText(name), value)
			}
		}
		return usageErr("%s %q: %s", flagText(name), value, m[3])
	case flagNeedsValue.MatchString(msg):
		return usageErr("%s needs a value", flagText(flagNeedsValue.FindStringSubmatch(msg)[1]))
	}
	return exitErr(exitUsage, err)
}

// flagText writes a flag name as the user types it.
func flagText(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagNamed is the flag of flags called name.
func flagNamed(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// hasFlag reports whether the running command has a flag called name.
func hasFlag(c *cli.Context, name string) bool {
	return c.Command != nil && flagNamed(c.Command.Flags, name) != nil
}

// listenError words a failure to listen on addr (the value of flag): the
// address is taken or not this machine's, or listening is not allowed, is
// the environment's refusal (exit 3); an address that is not one is a
// usage error.
func listenError(flag, addr string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		why := errno.Error()
		switch errno {
		case syscall.EADDRINUSE:
			why = "the port is in use by another process: stop it, or pick another port"
		case syscall.EACCES:
			why = "permission denied (ports below 1024 need privileges): pick a port of 1024 or more"
		case syscall.EADDRNOTAVAIL:
			why = "the address is not one of this machine's"
		}
		return exitErr(exitEnvironment, fmt.Errorf("%s %s: cannot listen: %s", flag, addr, why))
	}
	var ae *net.AddrError
	var pe *strconv.NumError
	if errors.As(err, &ae) || errors.As(err, &pe) {
		return usageErr("%s %s: not an address to listen on (HOST:PORT): %v", flag, addr, err)
	}
	return exitErr(exitEnvironment, fmt.Errorf("%s %s: cannot listen: %w", flag, addr, err))
}
