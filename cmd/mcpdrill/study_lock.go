package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/studies/install"
)

// studyLockCommand is `study lock`; run (nil: runStudyLock) locks what the
// parsed studyLockOptions ask for.
func studyLockCommand(run func(context.Context, *studyLockOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "lock",
		Usage:     "write the npm project and lockfile of every npm package-version of a servers.json, each alone",
		ArgsUsage: "SERVERS.json",
		Description: "Each npm entry with a \"package\" (neither \"excluded\" nor \"disabled\") is locked in the project\n" +
			"directory holding its command's node_modules, by convention npm/NAME@VERSION beside\n" +
			"servers.json: a package.json depending on that package alone, an .npmrc, and the\n" +
			"package-lock.json npm resolves for it (npm install --package-lock-only --ignore-scripts),\n" +
			"without registry URLs, as npm resolved it at the end of the --before day. study install then\n" +
			"installs each project alone. Names and versions are checked by npm's grammar first.\n\n" +
			exitCodes("a project could not be locked", false),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "before", Usage: "resolve as npm did at the end of `DAY` (YYYY-MM-DD, UTC): the study's date", DefaultText: "now"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 4, Usage: "lock `N` projects at once"},
			&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: "bound on one lock"},
			&cli.StringFlag{Name: "cache-dir", Usage: "npm's cache in `DIR`/npm", DefaultText: ".cache beside servers.json"},
			&cli.StringSliceFlag{Name: "only", Usage: "lock only the entry `NAME` (repeatable)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr"},
		},
		Action: action(parseStudyLockOptions, run, runStudyLock),
	}
}

// studyLockOptions is what one `mcpdrill study lock` asks for.
type studyLockOptions struct {
	env
	studySpec
	only  []string
	jobs  int
	quiet bool
	lock  install.LockOptions
}

// parseStudyLockOptions reads and checks study lock's flags and its
// servers.json; problems are usage errors.
func parseStudyLockOptions(c *cmdLine) (*studyLockOptions, error) {
	s, err := parseStudySpec(c, "study lock")
	if err != nil {
		return nil, err
	}
	o := &studyLockOptions{studySpec: s, only: c.StringSlice("only"), jobs: c.Int("jobs"), quiet: c.Bool("quiet"),
		lock: install.LockOptions{Timeout: c.Duration("timeout")}}
	if b := c.String("before"); b != "" {
		if o.lock.Before, err = time.Parse(time.DateOnly, b); err != nil {
			return nil, usageErr("study lock: --before %q: want a day, YYYY-MM-DD", b)
		}
	}
	cache := c.String("cache-dir")
	if cache == "" {
		cache = filepath.Join(s.dir, ".cache")
	}
	if o.lock.CacheDir, err = filepath.Abs(filepath.Join(cache, "npm")); err != nil {
		return nil, exitErr(exitUsage, err)
	}
	if o.jobs <= 0 || o.lock.Timeout <= 0 {
		return nil, usageErr("study lock: --jobs and --timeout must be positive")
	}
	return o, nil
}

// runStudyLock locks the projects and says what became of each.
func runStudyLock(ctx context.Context, o *studyLockOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := 0
	progress := func(r install.Locked) {
		done++
		if !o.quiet {
			fmt.Fprintln(o.stderr, lockLine(done, r))
		}
	}
	res, err := install.LockSpec(ctx, o.spec, o.only, o.jobs, o.lock, progress)
	if err != nil {
		return exitErr(exitInternal, err)
	}
	failed := 0
	for _, r := range res {
		if r.Err != nil {
			failed++
		}
	}
	fmt.Fprintf(o.stderr, "study lock: %d of %d npm projects locked\n", len(res)-failed, len(res))
	if failed > 0 {
		return exitErr(exitFindings, errors.New("study lock: some projects could not be locked (above)"))
	}
	return nil
}

// lockLine is the progress line of the done-th project locked. npm's error
// quotes registry text, so the line is made safe as every renderer does.
func lockLine(done int, r install.Locked) string {
	what := "locked"
	if r.Err != nil {
		what = "failed: " + r.Err.Error()
	} else if r.Lock != nil && r.Lock.LegacyPeers {
		what = "locked (legacy-peer-deps: npm refused the tree with its peers)"
	}
	return fmt.Sprintf("[%d] %s %s", done, safetext.Text(r.Dir), safetext.Text(what))
}
