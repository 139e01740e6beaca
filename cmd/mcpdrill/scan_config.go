package main

import (
	"fmt"
	"io"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// configHelp is the --config paragraph of scan's and drift's help.
const configHelp = "--config FILE takes the servers from an MCP client configuration (the files `mcpdrill configs`\n" +
	"lists; \"auto\": your own, in your home; a workspace's too with --workspace DIR), all of them or those\n" +
	"named with --server. Placeholders are resolved as each client does: ${env:X}, ${X}, ${X:-default},\n" +
	"${userHome}, ${workspaceFolder} (--workspace) and ${input:ID} (--input ID=VALUE; without it, exit 2);\n" +
	"Gemini CLI's $X, opencode's {env:X}; Codex's and Zed's strings are taken as written.\n" +
	"Secrets they resolve to are never printed. A file that is not one of your own (a repository's\n" +
	".vscode/mcp.json, .mcp.json, .codex/config.toml…) starts no command and is sent no ${env:…} or ${input:…} value until you\n" +
	"say so: --trust-workspace, or yes on a terminal after mcpdrill lists what would run (else exit 2)."

// configScan is one server's report in the JSON of `scan --config`.
type configScan struct {
	Config string       `json:"config"`
	Server string       `json:"server"`
	Report *scan.Report `json:"report"`
}

// writeScans writes a run's reports; o is the run for the CI formats
// (scanOutput). Without --config there is one report. With --config:
// table, each server's report under a heading; json, an array of {config,
// server, report}; the CI formats, one document whose findings are placed
// at each server's entry in its configuration (or in --sarif-file).
func writeScans(w io.Writer, ts []liveTarget, reps []*scan.Report, out outputFormat, o report.Output) error {
	switch {
	case out.format != "json" && out.format != "table":
		_, err := writeFindings(w, out, o)
		return err
	case ts[0].file == "":
		return writeScan(w, reps[0], out.format)
	case out.format == "json":
		doc := make([]configScan, len(reps))
		for i, rep := range reps {
			doc[i] = configScan{Config: ts[i].file, Server: ts[i].server, Report: rep}
		}
		return writeJSON(w, doc)
	}
	for i, rep := range reps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "== %s: %s\n", ts[i].label(), safetext.Text(ts[i].name()))
		if err := renderScan(w, rep, outputWidth(w)); err != nil {
			return err
		}
	}
	return nil
}

// configScanOutput is a --config run for the CI formats: each finding
// placed at its server's entry in its configuration (or in artifact, when
// given), its subject the server's name, and each check named after it.
func configScanOutput(ts []liveTarget, reps []*scan.Report, artifact string) (report.Output, error) {
	cat, err := catalogue()
	if err != nil {
		return report.Output{}, err
	}
	o := report.Output{Command: "scan", Catalogue: cat}
	for i, rep := range reps {
		t := ts[i]
		file, line := artifact, 0
		if file == "" {
			// The server's own entry: the line its configuration's parser
			// read it on, comments and all.
			file, line = t.file, t.line
		}
		results := report.Locate(rep.Findings, artifactPath(file), nil)
		for j := range results {
			results[j].Subject = t.server
			if line > 0 {
				results[j].Location.Line = line
			}
		}
		o.Results = append(o.Results, results...)
		for _, ch := range scanChecks(rep) {
			claims, server := ch.Claims, t.server
			ch.Name = server + "/" + ch.Name
			ch.Claims = func(r report.Result) bool { return r.Subject == server && claims(r) }
			o.Checks = append(o.Checks, ch)
		}
		o.Duration += time.Duration(rep.Meta.DurationMS) * time.Millisecond
	}
	return o, nil
}
