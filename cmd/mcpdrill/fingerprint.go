package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/inputfile"
)

// fingerprintCommand is the `mcpdrill fingerprint` command.
func fingerprintCommand() *cli.Command {
	return &cli.Command{
		Name:      "fingerprint",
		Usage:     "print the canonical, order-independent fingerprint of a tool set (manifest or live server)",
		ArgsUsage: "[MANIFEST | --url URL | -- COMMAND ARGS...]",
		Description: `Prints "sha256:<hex>" over the tools' name, description, inputSchema and outputSchema, in
canonical JSON (sorted keys, normalised numbers) and sorted by name, so key order and tool
order do not matter (METHODOLOGY.md defines it exactly). With --tools, one line per tool
follows: its own fingerprint and name. A capture file or any manifest shape is accepted.

` + exitCodes("", true),
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "manifest", Usage: "fingerprint this manifest or capture `FILE` instead of a live server"},
			&cli.BoolFlag{Name: "tools", Usage: "also print each tool's fingerprint"},
			&cli.BoolFlag{Name: "json", Usage: "write {fingerprint, tools: {name: fingerprint}} as JSON"},
		),
		Action: fingerprintAction,
	}
}

func fingerprintAction(c *cli.Context) error {
	var tools []drift.Tool
	if m := c.String("manifest"); m != "" || (c.String("url") == "" && looksLikeManifest(c.Args().Slice())) {
		// A manifest file, possibly followed by flags.
		path, extra := m, c.NArg() > 0
		if m == "" {
			args, err := interspersed(c)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return usageErr("missing MANIFEST (see --help)")
			}
			path, extra = args[0], len(args) > 1
		}
		if extra || c.String("url") != "" {
			return usageErr("give a MANIFEST or a live target, not both")
		}
		b, err := inputfile.Read(path)
		if err != nil {
			return usageErr("read %s: %v", path, err)
		}
		st, err := drift.LoadState(b)
		if err != nil {
			return usageErr("%s: %v", path, err)
		}
		tools = st.ToolSet()
	} else {
		cfg, err := targetConfig(c)
		if err != nil {
			return err
		}
		ctx, cancel := runContext(c, c.Duration("deadline"))
		defer cancel()
		obs, err := drift.Observe(ctx, cfg)
		if err != nil {
			return connectError(err)
		}
		if obs.Capped {
			fmt.Fprintf(c.App.ErrWriter, "mcpdrill: warning: tools/list was capped after %d page(s); the fingerprint covers a partial list\n", obs.Pages)
		}
		for _, u := range obs.Unreadable {
			fmt.Fprintf(c.App.ErrWriter, "mcpdrill: warning: a tool entry (%s) could not be read and is not in the fingerprint: %s\n", entryName(u.Name), u.Reason)
		}
		tools = obs.Tools
	}
	fp := drift.Fingerprint(tools)
	w := c.App.Writer
	if c.Bool("json") {
		per := map[string]string{}
		for _, t := range tools {
			per[t.Name] = drift.ToolFingerprint(t)
		}
		return writeJSON(w, map[string]any{"fingerprint": fp, "tools": per})
	}
	fmt.Fprintln(w, fp)
	if c.Bool("tools") {
		for _, name := range drift.ToolNames(tools) {
			for _, t := range tools {
				if t.Name == name {
					fmt.Fprintf(w, "%s  %s\n", drift.ToolFingerprint(t), name)
					break
				}
			}
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

// entryName names a tool entry in a message: its name quoted, or "unnamed".
func entryName(name string) string {
	if name == "" {
		return "unnamed"
	}
	return strconv.Quote(name)
}
