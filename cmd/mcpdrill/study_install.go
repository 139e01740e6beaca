package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/studies"
	"github.com/mcpdrill/mcpdrill/studies/install"
)

// studyInstallCommand is `study install`; run (nil: runStudyInstall)
// installs what the parsed studyInstallOptions ask for.
func studyInstallCommand(run func(context.Context, *studyInstallOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "install the pinned package of every servers.json entry under the study directory",
		ArgsUsage: "SERVERS.json",
		Description: "Each entry with a \"package\" (and neither \"excluded\" nor \"disabled\") is installed by its registry\n" +
			"(\"registry\", or inferred: a module path whose first element has a dot is Go, else npm):\n" +
			"  npm   npm ci in the project directory holding the command's\n" +
			"        node_modules, from its committed package-lock.json. Each\n" +
			"        package-version has a project of its own (npm/NAME@VERSION)\n" +
			"        that depends on it alone: a project pinning more fails.\n" +
			"        Install scripts do not run unless --scripts. The tree's files\n" +
			"        are then shared through a content-addressed store (hard\n" +
			"        links, CACHE/store) unless --no-store; a project installed\n" +
			"        from the same lockfile before is reused unless --force;\n" +
			"  go    go install MODULE/PKG@VERSION into the command's directory;\n" +
			"  pypi  a venv per server (the command is VENV/bin/SCRIPT) and pip\n" +
			"        install of NAME==VERSION, wheels only unless\n" +
			"        --allow-source-builds, or of the requirements.txt beside the\n" +
			"        venv with --require-hashes; with --find-links DIR from that\n" +
			"        directory alone (--no-index), the offline path;\n" +
			"  oci   docker pull IMAGE.\n" +
			"Every install runs with a scratch HOME and working directory, an environment with no credentials\n" +
			"(PATH, locale, certificates, proxies and Go's module settings only), the package managers' caches\n" +
			"under --cache-dir, and a time bound. A failed install is recorded, never fatal: study run reads\n" +
			"the log (" + studies.InstallLogName + " beside servers.json) and keeps such a server as a failed row\n" +
			"(failure install), and records each server's install time in meta apart from its scan time.\n\n" +
			exitCodes("", false),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 4, Usage: "run `N` installs at once"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Minute, Usage: "bound on one install"},
			&cli.StringFlag{Name: "find-links", Usage: "install PyPI packages from `DIR` alone (pip --no-index --find-links)"},
			&cli.StringFlag{Name: "cache-dir", Usage: "package managers' caches in `DIR`", DefaultText: ".cache beside servers.json"},
			&cli.StringFlag{Name: "log", Usage: "write the install log to `FILE`", DefaultText: studies.InstallLogName + " beside servers.json"},
			&cli.StringSliceFlag{Name: "only", Usage: "install only the entry `NAME` (repeatable)"},
			&cli.BoolFlag{Name: "force", Usage: "reinstall npm projects already installed from the same lockfile"},
			&cli.BoolFlag{Name: "scripts", Usage: "run npm install scripts (by default none runs: a native module they would build is missing)"},
			&cli.BoolFlag{Name: "no-store", Usage: "leave each npm tree as npm wrote it (no files shared through the store)"},
			&cli.BoolFlag{Name: "allow-source-builds", Usage: "let pip build source distributions (their build code runs at install time); by default wheels only"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr"},
		},
		Action: action(parseStudyInstallOptions, run, runStudyInstall),
	}
}

// studyInstallOptions is what one `mcpdrill study install` asks for.
type studyInstallOptions struct {
	env
	studySpec
	// log is --log: where the install log goes ("": beside servers.json).
	log string
	// quiet is --quiet: no progress on stderr.
	quiet bool
	// install are the install's options but for Progress, which
	// runStudyInstall sets.
	install install.Options
}

// parseStudyInstallOptions reads and checks study install's flags and its
// servers.json; problems are usage errors.
func parseStudyInstallOptions(c *cmdLine) (*studyInstallOptions, error) {
	s, err := parseStudySpec(c, "study install")
	if err != nil {
		return nil, err
	}
	o := &studyInstallOptions{studySpec: s, log: c.String("log"), quiet: c.Bool("quiet"), install: install.Options{
		Jobs: c.Int("jobs"), Timeout: c.Duration("timeout"), CacheDir: c.String("cache-dir"), Only: c.StringSlice("only"), Force: c.Bool("force"), SourceBuilds: c.Bool("allow-source-builds"),
		Scripts: c.Bool("scripts"), NoStore: c.Bool("no-store")}}
	if fl := c.String("find-links"); fl != "" {
		if o.install.FindLinks, err = filepath.Abs(fl); err != nil {
			return nil, exitErr(exitUsage, err)
		}
	}
	if o.install.Jobs < 0 || o.install.Timeout <= 0 {
		return nil, usageErr("study install: --jobs must be >= 0 and --timeout positive")
	}
	return o, nil
}

// runStudyInstall installs the packages and writes the install log.
func runStudyInstall(ctx context.Context, o *studyInstallOptions) error {
	so := o.install
	if !o.quiet {
		done := 0
		so.Progress = func(u studies.InstallUnit) {
			done++
			fmt.Fprintf(o.stderr, "[%d] %s %s (%s)\n", done, u.Status, safetext.Text(u.Key), (time.Duration(u.DurationMS) * time.Millisecond).Round(100*time.Millisecond))
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, err := install.Run(ctx, o.spec, so)
	if err != nil {
		return exitErr(exitInternal, err)
	}
	dest := o.log
	if dest == "" {
		dest = filepath.Join(o.dir, studies.InstallLogName)
	}
	if err := studies.WriteInstallLog(dest, log); err != nil {
		return exitErr(exitInternal, err)
	}
	install.Summary(o.stderr, log)
	return nil
}

// installLogOf reads the install log study run uses: path (--install-log),
// else the one beside servers.json when it exists (nil when none).
func installLogOf(path, specDir string) (*studies.InstallLog, error) {
	if path == "" {
		path = filepath.Join(specDir, studies.InstallLogName)
		if _, err := os.Stat(path); err != nil {
			return nil, nil
		}
	}
	l, err := studies.ReadInstallLog(path)
	if err != nil {
		return nil, fmt.Errorf("--install-log: %w", err)
	}
	return l, nil
}
