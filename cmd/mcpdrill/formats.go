package main

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/report"
)

// The output formats of every command that reports findings (scan, drift,
// drift check, study run): table for people, json for the command's own
// document, sarif for code scanning, junit for test dashboards, github for
// GitHub Actions annotations.
const formatList = "table, json, sarif, junit or github"

// defaultScanArtifact is the file a scan's SARIF results and annotations are
// attached to when --sarif-file does not name one: a scan reads no file of
// the repository, and GitHub code scanning wants every result in a file.
const defaultScanArtifact = ".mcpdrill/scan"

// formatFlags are the output and gating flags of a command that reports
// findings; doc names its JSON document and failOn is the --fail-on default.
func formatFlags(doc, failOn string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Value: "table", Usage: "output `FORMAT`: " + formatList},
		&cli.BoolFlag{Name: "json", Usage: "write " + doc + "; same as --format json"},
		&cli.StringFlag{Name: "fail-on", Value: failOn, Usage: "exit 1 when a finding is at or above `LEVEL`: error, warn, info or never"},
		&cli.StringFlag{Name: "sarif-category", Usage: "with --format sarif, the run's code scanning `CATEGORY` (automationDetails.id), to keep the alerts of several runs apart; without it the uploader names the run"},
	}
}

// outputFormat is what formatFlags asked for.
type outputFormat struct {
	format    string
	threshold report.Severity
	// category is --sarif-category.
	category string
}

func outputOptions(c *cmdLine) (outputFormat, error) {
	th, err := report.ParseThreshold(c.String("fail-on"))
	if err != nil {
		return outputFormat{}, exitErr(exitUsage, err)
	}
	f := strings.ToLower(c.String("format"))
	if c.Bool("json") {
		if c.IsSet("format") && f != "json" {
			return outputFormat{}, usageErr("--json and --format %s disagree", f)
		}
		f = "json"
	}
	switch f {
	case "table", "json", "sarif", "junit", "github":
	default:
		return outputFormat{}, usageErr("unknown --format %q (want %s)", f, formatList)
	}
	cat := c.String("sarif-category")
	if strings.ContainsFunc(cat, func(r rune) bool { return r < ' ' || r == 0x7f }) || len(cat) > 256 {
		return outputFormat{}, usageErr("--sarif-category: at most 256 characters, no control character")
	}
	return outputFormat{format: f, threshold: th, category: cat}, nil
}

// writeFindings writes o in out's CI format (sarif, junit, github), with
// out's threshold and SARIF category, the rule catalogue (when o has none)
// and mcpdrill's version, and reports whether the format was one of those;
// table and json belong to each command.
func writeFindings(w io.Writer, out outputFormat, o report.Output) (bool, error) {
	format := out.format
	o.Threshold, o.Category = out.threshold, out.category
	if o.Catalogue == nil {
		cat, err := catalogue()
		if err != nil {
			return true, err
		}
		o.Catalogue = cat
	}
	o.Version = version
	var err error
	switch format {
	case "sarif":
		err = report.WriteSARIF(w, o)
	case "junit":
		err = report.WriteJUnit(w, o)
	case "github":
		err = report.WriteAnnotations(w, o)
	default:
		return false, nil
	}
	if err != nil {
		return true, exitErr(exitInternal, err)
	}
	return true, nil
}

// catalogue is every rule, for the descriptions of machine formats.
func catalogue() (report.Catalogue, error) {
	cat, err := allRules()
	if err != nil {
		return nil, exitErr(exitInternal, err)
	}
	return cat, nil
}

// artifactPath names a file the way code scanning and annotations want it:
// slash-separated and relative to the root of the git repository holding
// it; a relative path that stays below the working directory when no
// repository holds it; an absolute path otherwise.
func artifactPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(p))
	}
	if root := clientconfig.RepoRoot(filepath.Dir(abs)); root != "" {
		if rel, err := filepath.Rel(root, abs); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	if !filepath.IsAbs(p) && filepath.IsLocal(p) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	s := filepath.ToSlash(abs)
	if !strings.HasPrefix(s, "/") {
		s = "/" + s // a Windows drive path, as a file URI path
	}
	return s
}

// fileToolLines reads the lines of the tool entries of a file that may be a
// manifest (none when it is absent or not JSON).
func fileToolLines(path string) map[string]int {
	b, err := inputfile.Read(path)
	if err != nil {
		return nil
	}
	return report.ToolLines(b)
}

// claimTool claims the findings about one tool.
func claimTool(name string) func(report.Result) bool {
	return func(r report.Result) bool { return r.Tool == name }
}
