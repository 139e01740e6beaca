package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// version is what `mcpdrill version` and --version report. A release
// build sets it with -ldflags "-X main.version=v1.2.3" (make build does,
// from git describe); otherwise it comes from the build info.
var version string

func init() { version = buildVersion(version, debug.ReadBuildInfo) }

// versionCommand is the `mcpdrill version` command.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print mcpdrill's version, the commit it was built from and the Go toolchain",
		ArgsUsage: " ",
		Action:    action(parseVersionOptions, nil, runVersion),
	}
}

// versionOptions is what `mcpdrill version` needs: the app's name.
type versionOptions struct {
	env
	app string
}

func parseVersionOptions(c *cmdLine) (*versionOptions, error) {
	if err := noArguments(c); err != nil {
		return nil, err
	}
	return &versionOptions{app: c.cli.App.Name}, nil
}

// runVersion prints the version, the commit and the toolchain.
func runVersion(_ context.Context, o *versionOptions) error {
	fmt.Fprintf(o.stdout, "%s version %s\n", o.app, version)
	commit, modified := vcsRevision(debug.ReadBuildInfo)
	if commit != "" {
		if modified {
			commit += " (modified)"
		}
		fmt.Fprintf(o.stdout, "commit %s\n", commit)
	}
	fmt.Fprintf(o.stdout, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// buildVersion is the version to report: the one given by -ldflags when
// there is one; else the main module's version from the build info
// ("v1.2.3" after `go install …@v1.2.3`, a pseudo-version that go build
// derives from the repository's tags in a clone); else "devel", followed by
// the commit when the build info names one.
func buildVersion(ldflags string, read func() (*debug.BuildInfo, bool)) string {
	if ldflags != "" {
		return ldflags
	}
	if bi, ok := read(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	if rev, modified := vcsRevision(read); rev != "" {
		if modified {
			rev += "-dirty"
		}
		return "devel+" + rev
	}
	return "devel"
}

// vcsRevision returns the commit the binary was built from (cut to 12
// characters) and whether the work tree had changes, from the build info
// (empty when it names none: go test, or a build outside a repository).
func vcsRevision(read func() (*debug.BuildInfo, bool)) (rev string, modified bool) {
	bi, ok := read()
	if !ok {
		return "", false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return rev, modified
}

// commit is the commit the binary was built from when the build says so
// with -ldflags "-X main.commit=…" (make build does, from git, so that a
// build with -buildvcs=false still names it).
var commit string

// buildCommit is the commit the binary was built from, "-dirty" added when
// its work tree had changes: -ldflags' commit, else the build info's; ""
// when neither names one. A study records it in results.json's meta.
func buildCommit() string {
	if commit != "" {
		return commit
	}
	rev, modified := vcsRevision(debug.ReadBuildInfo)
	if rev != "" && modified {
		rev += "-dirty"
	}
	return rev
}
