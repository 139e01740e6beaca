package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/scan"
)

// renderWidths are the widths the table goldens are rendered at: a narrow
// terminal (the compact layout) and a wide one (tables).
var renderWidths = []int{80, 200}

// checkFits fails when a line of out is wider than width (but for the
// fingerprint lines: a hash is not wrapped).
func checkFits(t *testing.T, name, out string, width int) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if w := twwidth.Width(line); w > width && !strings.HasPrefix(line, "fingerprint ") {
			t.Errorf("%s: line %d is %d columns wide, more than %d:\n%s", name, i+1, w, width, line)
		}
	}
}

// fitsAtWidths renders at each of renderWidths, checks that the output
// fits and compares it with the golden file testdata/STEM-WIDTH.txt.
func fitsAtWidths(t *testing.T, stem string, render func(w io.Writer, width int) error) {
	t.Helper()
	for _, width := range renderWidths {
		var b bytes.Buffer
		if err := render(&b, width); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s-%d.txt", stem, width)
		checkFits(t, name, b.String(), width)
		testutil.Golden(t, name, b.Bytes())
	}
}

// TestScanTablesFitWidth renders a scan report with long tool names,
// messages, expectations and pointers at 80 and 200 columns, its score
// lines included.
func TestScanTablesFitWidth(t *testing.T) {
	var rep scan.Report
	if err := json.Unmarshal(mustRead(t, "testdata/render/scan.json"), &rep); err != nil {
		t.Fatal(err)
	}
	fitsAtWidths(t, "render/scan", func(w io.Writer, width int) error { return renderScan(w, &rep, width) })
}

// TestDriftTablesFitWidth renders the drift check of the CI fixtures.
func TestDriftTablesFitWidth(t *testing.T) {
	_, out, errOut := runCLI(t, "drift", "check", "--baseline", ciBase, "--current", ciCurrent, "--format", "json")
	var rep drift.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	fitsAtWidths(t, "render/drift-check", func(w io.Writer, width int) error { return renderDrift(w, &rep, width) })
}

// TestListingsFitWidth renders the catalogues at 80 and 200 columns: the
// faults and one fault's parameters (the longest help), the testbed's
// profiles, the rules and one rule (TestRulesRequirements does a
// revision's requirements).
func TestListingsFitWidth(t *testing.T) {
	for _, args := range [][]string{{"faults"}, {"faults", "malformed"}, {"testbed", "--list"}, {"rules"}, {"rules", "BRK-IN-BECAME-REQUIRED"}} {
		stem := strings.Join(strings.FieldsFunc(strings.Join(args, " "), func(r rune) bool { return r == ' ' || r == '-' }), "-")
		fitsAtWidths(t, "render/"+stem, func(w io.Writer, width int) error {
			t.Setenv("COLUMNS", strconv.Itoa(width))
			code, out, errOut := runCLI(t, args...)
			if code != 0 {
				return fmt.Errorf("%v: exit %d: %s", args, code, errOut)
			}
			_, err := io.WriteString(w, out)
			return err
		})
	}
}

// The compact layout puts each finding's verdict line first, its message
// below; the wide one keeps the table.
func TestCompactLayoutBelow120(t *testing.T) {
	g := newGrid(gridColumn{name: "severity"}, gridColumn{name: "rule"}, gridColumn{name: "message", long: true})
	g.add("error", "MCP-X", strings.Repeat("word ", 40))
	var narrow, wide bytes.Buffer
	if err := g.render(&narrow, compactWidth-1); err != nil {
		t.Fatal(err)
	}
	if err := g.render(&wide, compactWidth); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(narrow.String(), "\n")
	if lines[0] != "error  MCP-X" || !strings.HasPrefix(lines[1], "  word word") || !strings.HasPrefix(lines[2], "    word") {
		t.Errorf("compact layout:\n%s", narrow.String())
	}
	if !strings.Contains(wide.String(), "│ SEVERITY │") {
		t.Errorf("wide layout is not a table:\n%s", wide.String())
	}
	checkFits(t, "narrow", narrow.String(), compactWidth-1)
	checkFits(t, "wide", wide.String(), compactWidth)
}

func TestWrapText(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"", 10, []string{""}},
		{"one two three four", 9, []string{"one two", "three", "four"}},
		{"a /very/long/pointer/word b", 8, []string{"a", "/very/lo", "ng/point", "er/word", "b"}},
		{"déjà vu déjà vu", 7, []string{"déjà vu", "déjà vu"}},
		{"line\nbreaks   and\tspaces", 40, []string{"line breaks and spaces"}},
	} {
		if got := wrapText(c.in, c.width); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("wrapText(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// Help text: a paragraph's lines are joined and wrapped, continuing at the
// offset; blank and indented lines stay as they are; what fits is untouched.
func TestReflow(t *testing.T) {
	for _, c := range []struct {
		in            string
		offset, width int
		want          string
	}{
		{"fits\tas is", 3, 40, "fits\tas is"},
		{"one two three\nfour five", 3, 15, "one two three\n   four five"},
		{"a paragraph\nthat goes on\n\n  0  ok\n  1  findings at or above the gate\nlast", 2, 20,
			"a paragraph that\n  goes on\n\n    0  ok\n    1  findings at or above the gate\n  last"},
		{"word", 90, 100, "word"},
	} {
		if got := reflow(c.in, c.offset, c.width); got != c.want {
			t.Errorf("reflow(%q, %d, %d) =\n%s\nwant\n%s", c.in, c.offset, c.width, got, c.want)
		}
	}
	// Every help text fits 80 columns but for its synopsis (USAGE), an
	// argv that is not broken.
	t.Setenv("COLUMNS", "80")
	fits := func(argv []string) {
		_, out, _ := runCLI(t, append(argv, "--help")...)
		section := ""
		for _, line := range strings.Split(out, "\n") {
			if line != "" && line[0] != ' ' {
				section = line
			}
			if section != "USAGE:" && twwidth.Width(line) > 80 {
				t.Errorf("mcpdrill %s --help: a line of %d columns under %s\n%s", strings.Join(argv, " "), twwidth.Width(line), section, line)
			}
		}
	}
	fits(nil)
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			if cmd.Hidden || cmd.Name == "help" {
				continue
			}
			argv := append(slices.Clone(path), cmd.Name)
			fits(argv)
			walk(argv, cmd.Subcommands)
		}
	}
	walk(nil, newApp().Commands)
}

// Output that is not a terminal is fitted to $COLUMNS, else to 200.
func TestOutputWidth(t *testing.T) {
	var b bytes.Buffer
	t.Setenv("COLUMNS", "")
	if w := outputWidth(&b); w != defaultWidth {
		t.Errorf("no COLUMNS: %d, want %d", w, defaultWidth)
	}
	for v, want := range map[string]int{"90": 90, "0": defaultWidth, "wide": defaultWidth, "-5": defaultWidth} {
		t.Setenv("COLUMNS", v)
		if w := outputWidth(&b); w != want {
			t.Errorf("COLUMNS=%q: %d, want %d", v, w, want)
		}
	}
	t.Setenv("COLUMNS", "100")
	if w := outputWidth(&maskedWriter{w: &b}); w != 100 {
		t.Errorf("through a maskedWriter: %d", w)
	}
}
