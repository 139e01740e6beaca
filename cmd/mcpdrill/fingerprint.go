package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// fingerprintCommand is the `mcpdrill fingerprint` command; run (nil:
// runFingerprint) prints what the parsed fingerprintOptions name.
func fingerprintCommand(run func(context.Context, *fingerprintOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "fingerprint",
		ArgsUsage: "[MANIFEST | --url URL | -- COMMAND ARGS...]",
		Usage:     "print the canonical, order-independent fingerprint of a tool set (manifest or live server)",
		Description: `Prints "sha256:<hex>" over the tools' name, description, inputSchema and outputSchema, in
canonical JSON (sorted keys, normalised numbers) and sorted by name, so key order and tool
order do not matter (METHODOLOGY.md defines it exactly). With --tools, one line per tool
follows: its own fingerprint and name. A capture file or any manifest shape is accepted.
--structural leaves out descriptions and titles (the tool's and every schema's): a
rewording does not change the fingerprint; a name, a type or a constraint does.

` + exitCodes("", true),
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "manifest", Usage: "fingerprint this manifest or capture `FILE` instead of a live server"},
			&cli.BoolFlag{Name: "tools", Usage: "also print each tool's fingerprint"},
			structuralFlag("fingerprint"),
			&cli.BoolFlag{Name: "json", Usage: "write {fingerprint, tools: {name: fingerprint}} as JSON"},
		),
		Action: action(parseFingerprintOptions, run, runFingerprint),
	}
}

// fingerprintOptions is what one `mcpdrill fingerprint` asks for: a
// manifest's tools, or a live server.
type fingerprintOptions struct {
	env
	// manifest names the manifest and tools are its tools; otherwise live
	// is the server, listed by the run within deadline.
	manifest string
	tools    []mcp.Tool
	live     *mcp.Config
	deadline time.Duration
	// json is --json, perTool --tools, structural --structural.
	json, perTool, structural bool
}

// parseFingerprintOptions reads and checks fingerprint's flags and the
// manifest they name, if any; problems are usage errors.
func parseFingerprintOptions(c *cmdLine) (*fingerprintOptions, error) {
	m := c.String("manifest")
	if m == "" && (c.String("url") != "" || !looksLikeManifest(c.Args().Slice())) {
		cfg, err := targetConfig(c)
		if err != nil {
			return nil, err
		}
		return fingerprintFlags(c, &fingerprintOptions{live: &cfg}), nil
	}
	// A manifest file, possibly followed by flags.
	path, extra := m, c.NArg() > 0
	if m == "" {
		args, err := interspersed(c)
		if err != nil {
			return nil, err
		}
		if len(args) == 0 {
			return nil, usageErr("missing MANIFEST (see --help)")
		}
		path, extra = args[0], len(args) > 1
	}
	if extra || c.String("url") != "" {
		return nil, usageErr("give a MANIFEST or a live target, not both")
	}
	st, err := loadState(path)
	if err != nil {
		return nil, err
	}
	return fingerprintFlags(c, &fingerprintOptions{manifest: path, tools: st.ToolSet()}), nil
}

// fingerprintFlags sets o's output flags and deadline, read once the flags
// after MANIFEST are applied.
func fingerprintFlags(c *cmdLine, o *fingerprintOptions) *fingerprintOptions {
	o.json, o.perTool, o.structural, o.deadline = c.Bool("json"), c.Bool("tools"), c.Bool("structural"), c.Duration("deadline")
	return o
}

// runFingerprint fingerprints the manifest's tools or the live server's
// and prints the report.
func runFingerprint(ctx context.Context, o *fingerprintOptions) error {
	tools := o.tools
	if o.live != nil {
		ctx, cancel := runContext(ctx, o.deadline)
		defer cancel()
		obs, err := drift.Observe(ctx, *o.live)
		if err != nil {
			return connectError(targetName(*o.live), err)
		}
		if obs.Capped {
			fmt.Fprintf(o.stderr, "mcpdrill: warning: tools/list was capped after %d page(s); the fingerprint covers a partial list\n", obs.Pages)
		}
		for _, u := range obs.Unreadable {
			fmt.Fprintf(o.stderr, "mcpdrill: warning: a tool entry (%s) could not be read and is not in the fingerprint: %s\n", entryName(u.Name), safetext.Text(u.Reason))
		}
		tools = obs.Tools
	}
	if o.structural {
		tools = drift.Structural(tools)
	}
	rep := drift.FingerprintTools(tools)
	rep.Structural = o.structural
	w := o.stdout
	if o.json {
		return writeJSON(w, rep)
	}
	fmt.Fprintln(w, rep.Fingerprint)
	if o.perTool {
		for _, name := range rep.Names {
			fmt.Fprintf(w, "%s  %s\n", rep.Tools[name], safetext.Text(name))
		}
	}
	return nil
}

// looksLikeManifest tells a MANIFEST argument from a stdio command (urfave/cli
// drops the "--" before a command): a manifest is a regular, non-executable
// file given alone or followed by flags. --manifest removes the guesswork.
func looksLikeManifest(args []string) bool {
	if len(args) == 0 || (len(args) > 1 && !strings.HasPrefix(args[1], "-")) {
		return false
	}
	st, err := os.Stat(args[0])
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 == 0
}

// entryName names a tool entry in a message: its name quoted
// (safetext.Quote), or "unnamed".
func entryName(name string) string {
	if name == "" {
		return "unnamed"
	}
	return safetext.Quote(name)
}
