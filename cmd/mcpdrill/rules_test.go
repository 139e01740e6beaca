package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/scan"
)

// TestRulesRequirements pins "mcpdrill rules --requirements REV" for every
// revision the table covers, at 200 columns and fitted to 80, and checks
// the JSON form lists the same table.
func TestRulesRequirements(t *testing.T) {
	for _, rev := range scan.RequirementRevisions() {
		fitsAtWidths(t, "rules/requirements-"+rev, func(w io.Writer, width int) error {
			t.Setenv("COLUMNS", strconv.Itoa(width))
			code, out, _ := runCLI(t, "rules", "--requirements", rev)
			if code != exitOK {
				return fmt.Errorf("%s: exit %d: %s", rev, code, out)
			}
			_, err := io.WriteString(w, out)
			return err
		})
		code, out, _ := runCLI(t, "rules", "--requirements", rev, "--json")
		var reqs []scan.Requirement
		if err := json.Unmarshal([]byte(out), &reqs); code != exitOK || err != nil {
			t.Fatalf("%s --json: exit %d, %v", rev, code, err)
		}
		if len(reqs) != len(scan.Requirements(rev)) {
			t.Errorf("%s --json: %d requirements, want %d", rev, len(reqs), len(scan.Requirements(rev)))
		}
	}
	if code, _, _ := runCLI(t, "rules", "--requirements", "1999-01-01"); code != exitUsage {
		t.Errorf("unknown revision: exit %d, want %d", code, exitUsage)
	}
}

// TestScanPrintsRequirementCounts: the text report prints the NOT VERIFIED
// accounting under the score line, and nothing when the report has none.
func TestScanPrintsRequirementCounts(t *testing.T) {
	rep := scan.Report{Requirements: &scan.RequirementCounts{Revision: "2025-11-25", Requirements: 48, Checked: 10, Passed: 9, Failed: 1, NotApplicable: 8, NotVerified: 30,
		Outcomes: []scan.RequirementOutcome{
			{ID: "REQ-PING-01", Level: "MUST", Section: "basic/utilities/ping#behavior-requirements", Outcome: scan.OutcomePassed},
			{ID: "REQ-PAGINATION-02", Level: "SHOULD", Section: "server/utilities/pagination#error-handling", Outcome: scan.OutcomeFailed},
		}}}
	var b bytes.Buffer
	if err := renderScan(&b, &rep, 200); err != nil {
		t.Fatal(err)
	}
	// Issue 38: the failed requirements, by id, under the counts.
	want := "requirements 2025-11-25: 10 checked (9 passed, 1 failed), 8 n/a, 30 not verified of 48 requirements\n" +
		"  failed: REQ-PAGINATION-02 (SHOULD, server/utilities/pagination#error-handling)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("want %q in:\n%s", want, b.String())
	}
	b.Reset()
	rep.Requirements = nil
	if err := renderScan(&b, &rep, 200); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "requirements ") {
		t.Errorf("counts printed without accounting:\n%s", b.String())
	}
}
