package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// The tables that documents hold between
//
//	<!-- BEGIN GENERATED: NAME -->
//	<!-- END GENERATED: NAME -->
//
// are rendered from the catalogues by TestDocsGenerated: it fails when a
// file differs, and `go test ./cmd/mcpdrill -run TestDocsGenerated -update`
// rewrites them.
var generatedTables = []struct {
	file, name string
	render     func(t *testing.T) string
}{
	{"METHODOLOGY.md", "faults", faultTable},
	{"docs/faults.md", "faults", faultTable},
	{"docs/rules.md", "rules", ruleTable},
	{"docs/rules.md", "drift-grades", driftGradeTable},
}

func TestDocsGenerated(t *testing.T) {
	root := testutil.ModuleRoot(t)
	for _, g := range generatedTables {
		t.Run(g.file+"#"+g.name, func(t *testing.T) {
			path := filepath.Join(root, g.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			begin, end := "<!-- BEGIN GENERATED: "+g.name+" -->\n", "<!-- END GENERATED: "+g.name+" -->"
			s := string(b)
			i, j := strings.Index(s, begin), strings.Index(s, end)
			if i < 0 || j < i {
				t.Fatalf("%s has no %q … %q markers", g.file, strings.TrimSpace(begin), end)
			}
			got := s[:i+len(begin)] + g.render(t) + s[j:]
			if got == s {
				return
			}
			if testutil.Updating() {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			t.Errorf("%s: the %s table differs from the catalogue; run go test ./cmd/mcpdrill -run TestDocsGenerated -update and review the diff", g.file, g.name)
		})
	}
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// faultTable renders faults.Catalogue as `mcpdrill faults` shows it.
func faultTable(*testing.T) string {
	var b strings.Builder
	b.WriteString("| fault | default target | params (default) | what the client observes |\n|---|---|---|---|\n")
	for _, s := range faults.Catalogue() {
		var ps []string
		for _, p := range s.Params {
			ps = append(ps, fmt.Sprintf("`%s` (%s)", p.Name, p.FormatDefault()))
		}
		params := strings.Join(ps, ", ")
		if params == "" {
			params = "—"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Name, cell(target(s)), cell(params), cell(s.Observed))
	}
	return b.String()
}

// ruleTable renders the merged rule catalogue, as `mcpdrill rules` lists it.
func ruleTable(t *testing.T) string {
	cat, err := allRules()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| id | severity | title |\n|---|---|---|\n")
	for _, r := range cat {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.ID, r.Severity, cell(r.Title))
	}
	return b.String()
}

// driftGradeTable is the drift catalogue's grading table, which drift's
// TestCatalogueTableGolden renders from the catalogue into its golden file.
func driftGradeTable(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(testutil.ModuleRoot(t), "drift", "testdata", "catalogue.golden.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocLinks: every relative link of README.md, METHODOLOGY.md,
// CHANGELOG.md and docs/*.md names a file of the repository, and its
// #fragment, if any, a heading of that file (by GitHub's anchor rule).
func TestDocLinks(t *testing.T) {
	root := testutil.ModuleRoot(t)
	files := []string{"README.md", "METHODOLOGY.md", "CHANGELOG.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path]
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range proseLines(string(b)) {
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
					continue
				}
				n++
				path, frag, _ := strings.Cut(target, "#")
				full := filepath.Join(root, f)
				if path != "" {
					full = filepath.Join(root, filepath.Dir(f), path)
				}
				st, err := os.Stat(full)
				if err != nil {
					t.Errorf("%s:%d: link %q: %v", f, i+1, target, err)
					continue
				}
				if frag != "" && !st.IsDir() && strings.HasSuffix(full, ".md") && !anchorsOf(full)[frag] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor %q", f, i+1, target, strings.TrimPrefix(full, root+"/"), frag)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d relative links checked", n)
	}
}

// proseLines returns a document's lines with those inside fenced code
// blocks blanked, so that line numbers stay.
func proseLines(s string) []string {
	lines := strings.Split(s, "\n")
	fence := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			lines[i] = ""
		} else if fence {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives a document's headings:
// lower case; letters, digits, '-' and '_' kept, spaces made '-',
// everything else dropped; a repeated anchor gets -1, -2, ….
func headingAnchors(s string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(s) {
		if headingLevel(l) == 0 {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#"))) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if k := seen[a]; k > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, k)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}
