package drift

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// TestCatalogueTableGolden pins the grading table as Markdown; METHODOLOGY
// quotes it, so a grade change shows up as a golden diff to review.
func TestCatalogueTableGolden(t *testing.T) {
	var b strings.Builder
	b.WriteString("| change kind | side | condition | rule | severity |\n|---|---|---|---|---|\n")
	for _, g := range grades {
		cond := g.cond
		if cond == "" {
			cond = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", g.kind, g.dir, cond, g.rule, g.sev)
	}
	testutil.Golden(t, "catalogue.golden.md", []byte(b.String()))
}
