package drift

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// The comments parameter of create_pull_request_review in
// @modelcontextprotocol/server-github 2025.3.28 and 2025.4.8 (descriptions
// left out): an item schema became anyOf [the old item, a new one], the old
// one kept byte for byte.
const (
	githubOldItems = `{"type":"object","properties":{"path":{"type":"string"},"position":{"type":"number"},"body":{"type":"string"}},"required":["path","position","body"],"additionalProperties":false}`
	githubNewItems = `{"anyOf":[` + githubOldItems + `,{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"number"},"body":{"type":"string"}},"required":["path","line","body"],"additionalProperties":false}]}`
)

// gradeCase is a pair of schemas graded on both sides: the verdict of every
// change on each side, and the side's outcome (whether any change is
// breaking).
type gradeCase struct {
	name     string
	old, new string
	// in and out list "pointer verdict rule" for each change, sorted as
	// Diff sorts them; pointers are relative to the schema root.
	in, out []string
}

var gradeCases = []gradeCase{
	{"old schema kept as an anyOf branch (server-github 2025.3.28 to 2025.4.8)",
		`{"type":"object","properties":{"comments":{"type":"array","items":` + githubOldItems + `}}}`,
		`{"type":"object","properties":{"comments":{"type":"array","items":` + githubNewItems + `}}}`,
		[]string{
			"/properties/comments/items/additionalProperties compatible BRK-IN-ADDITIONAL-PROPERTIES-LOOSENED",
			"/properties/comments/items/anyOf compatible BRK-IN-COVERED",
			"/properties/comments/items/properties/body compatible BRK-IN-COVERED",
			"/properties/comments/items/properties/path compatible BRK-IN-COVERED",
			"/properties/comments/items/properties/position compatible BRK-IN-COVERED",
			"/properties/comments/items/type compatible BRK-IN-TYPE-WIDENED",
		},
		// As an output, the new schema admits items with "line" and no
		// "position"; body and path are still always there, and items are
		// still objects.
		[]string{
			"/properties/comments/items/additionalProperties breaking BRK-OUT-ADDITIONAL-PROPERTIES-LOOSENED",
			"/properties/comments/items/anyOf compatible BRK-OUT-CONSTRAINT-TIGHTENED",
			"/properties/comments/items/properties/body compatible BRK-OUT-COVERED",
			"/properties/comments/items/properties/path compatible BRK-OUT-COVERED",
			"/properties/comments/items/properties/position breaking BRK-OUT-REQUIRED-PROPERTY-REMOVED",
			"/properties/comments/items/type compatible BRK-OUT-COVERED",
		}},
	{"type widened",
		`{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"type":"object","properties":{"n":{"type":["number","null"]}}}`,
		[]string{"/properties/n/type compatible BRK-IN-TYPE-WIDENED"},
		[]string{"/properties/n/type breaking BRK-OUT-TYPE-WIDENED"}},
	{"bounds loosened",
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10},"s":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[a-z]+$"}}}`,
		`{"type":"object","properties":{"n":{"type":"integer","maximum":20},"s":{"type":"string","maxLength":8}}}`,
		[]string{
			"/properties/n/maximum compatible BRK-IN-CONSTRAINT-LOOSENED",
			"/properties/n/minimum compatible BRK-IN-CONSTRAINT-LOOSENED",
			"/properties/s/maxLength compatible BRK-IN-CONSTRAINT-LOOSENED",
			"/properties/s/minLength compatible BRK-IN-CONSTRAINT-LOOSENED",
			"/properties/s/pattern compatible BRK-IN-CONSTRAINT-LOOSENED",
		},
		[]string{
			"/properties/n/maximum breaking BRK-OUT-CONSTRAINT-LOOSENED",
			"/properties/n/minimum breaking BRK-OUT-CONSTRAINT-LOOSENED",
			"/properties/s/maxLength breaking BRK-OUT-CONSTRAINT-LOOSENED",
			"/properties/s/minLength breaking BRK-OUT-CONSTRAINT-LOOSENED",
			"/properties/s/pattern breaking BRK-OUT-CONSTRAINT-LOOSENED",
		}},
	{"bounds tightened",
		`{"type":"object","properties":{"count":{"type":"number"}}}`, `{"type":"object","properties":{"count":{"type":"number","minimum":1,"maximum":10}}}`,
		[]string{
			"/properties/count/maximum breaking BRK-IN-CONSTRAINT-TIGHTENED",
			"/properties/count/minimum breaking BRK-IN-CONSTRAINT-TIGHTENED",
		},
		[]string{
			"/properties/count/maximum compatible BRK-OUT-CONSTRAINT-TIGHTENED",
			"/properties/count/minimum compatible BRK-OUT-CONSTRAINT-TIGHTENED",
		}},
	{"enum value added",
		`{"type":"object","properties":{"u":{"enum":["metric","imperial"]}}}`, `{"type":"object","properties":{"u":{"enum":["metric","imperial","kelvin"]}}}`,
		[]string{"/properties/u/enum compatible BRK-IN-ENUM-VALUE-ADDED"},
		[]string{"/properties/u/enum breaking BRK-OUT-ENUM-VALUE-ADDED"}},
	{"required to optional",
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"type":"object","properties":{"a":{"type":"string"}}}`,
		[]string{"/properties/a compatible BRK-IN-BECAME-OPTIONAL"},
		[]string{"/properties/a breaking BRK-OUT-BECAME-OPTIONAL"}},
	{"additionalProperties opened",
		`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`,
		[]string{"/additionalProperties compatible BRK-IN-ADDITIONAL-PROPERTIES-LOOSENED"},
		[]string{"/additionalProperties breaking BRK-OUT-ADDITIONAL-PROPERTIES-LOOSENED"}},
	{"additionalProperties dropped",
		// A server sends the members its schema declares: leaving out
		// additionalProperties does not make it send others.
		`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, `{"type":"object","properties":{"a":{"type":"string"}}}`,
		[]string{"/additionalProperties compatible BRK-IN-ADDITIONAL-PROPERTIES-LOOSENED"},
		[]string{"/additionalProperties compatible BRK-OUT-COVERED"}},
	{"optional argument added to a tool with none",
		`{"type":"object"}`, `{"type":"object","properties":{"verbose":{"type":"boolean"}}}`,
		[]string{"/properties/verbose compatible BRK-IN-OPTIONAL-PROPERTY-ADDED"},
		[]string{"/properties/verbose compatible BRK-OUT-PROPERTY-ADDED"}},
	{"oneOf branch widened into an overlap",
		`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer","minimum":5}]}}}`,
		`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":["integer","string"],"minimum":5}]}}}`,
		// A string matched one branch; now it matches two and is rejected.
		[]string{"/properties/v/oneOf/1/type breaking BRK-IN-NARROWED"},
		[]string{"/properties/v/oneOf/1/type undetermined BRK-OUT-UNDETERMINED"}},
	{"format added",
		`{"type":"object","properties":{"data":{"type":"string"}}}`, `{"type":"object","properties":{"data":{"type":"string","format":"uri"}}}`,
		[]string{"/properties/data/format undetermined BRK-IN-UNDETERMINED"},
		[]string{"/properties/data/format compatible BRK-OUT-CONSTRAINT-TIGHTENED"}},
	{"pattern relaxed (not decided)",
		`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$"}}}`, `{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z0-9]+$"}}}`,
		[]string{"/properties/id/pattern undetermined BRK-IN-UNDETERMINED"},
		[]string{"/properties/id/pattern breaking BRK-OUT-PATTERN-CHANGED"}},
}

func TestGradeByInstances(t *testing.T) {
	for _, tc := range gradeCases {
		for _, dir := range []Direction{directionInput, directionOutput} {
			t.Run(tc.name+"/"+string(dir), func(t *testing.T) {
				root, want := "/inputSchema", tc.in
				if dir == directionOutput {
					root, want = "/outputSchema", tc.out
				}
				var got []string
				for _, c := range Diff([]mcp.Tool{schemaTool(t, dir, tc.old)}, []mcp.Tool{schemaTool(t, dir, tc.new)}) {
					if c.Verdict == "" {
						continue // descriptions, defaults
					}
					got = append(got, fmt.Sprintf("%s %s %s", strings.TrimPrefix(c.Pointer, root), c.Verdict, c.RuleID))
					if (c.Verdict == verdictBreaking && c.Witness == "") || (c.Verdict == verdictCompatible && c.Witness != "") {
						t.Errorf("%s: verdict %s with witness %q", c.Pointer, c.Verdict, c.Witness)
					}
					if c.Breaking != (c.Verdict == verdictBreaking) {
						t.Errorf("%s: breaking %v with verdict %s", c.Pointer, c.Breaking, c.Verdict)
					}
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
				}
			})
		}
	}
}

// A witness names where the value is and what it is, from the schemas.
func TestWitnessShown(t *testing.T) {
	cs := Diff([]mcp.Tool{schemaTool(t, directionInput, `{"type":"object","properties":{"count":{"type":"number"}}}`)},
		[]mcp.Tool{schemaTool(t, directionInput, `{"type":"object","properties":{"count":{"type":"number","maximum":10}}}`)})
	if len(cs) != 1 || cs[0].Witness != "/count = 10.000000000001" && !strings.HasPrefix(cs[0].Witness, "/count = ") {
		t.Fatalf("changes %+v", cs)
	}
	fs := changeFindings(cs)
	if len(fs) != 1 || fs[0].Rule != ruleSchema || !strings.Contains(fs[0].Evidence, "rejected by the new: /count = ") {
		t.Errorf("finding %+v", fs)
	}
}
