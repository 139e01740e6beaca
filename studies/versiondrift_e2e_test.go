package studies_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/studies"
	"github.com/mcpdrill/mcpdrill/studies/pages"
	"github.com/mcpdrill/mcpdrill/studies/versiondrift"
)

// The testbed's drifting profile serves tool set 1 or 2 (--version): a
// renamed parameter, a removed enum value, a new required property, a
// changed description, a removed tool and an added tool. Declared as a
// minor release of one package, the pair must carry exactly those changes,
// graded, and a semver violation.
func TestVersionDriftPair(t *testing.T) {
	bin := studyBinary(t, "subprocess study")
	dir := t.TempDir()
	server := func(version, pkg, previousOf string) map[string]any {
		e := map[string]any{"command": bin, "args": []string{"testbed", "--profile", "drifting", "--version", version, "--drift-after", "-1"}, "package": pkg}
		if previousOf != "" {
			e["previous_of"] = previousOf
		}
		return e
	}
	res := runStudy(t, dir, map[string]any{
		"drifting":      server("2", "drifting@1.5.0", ""),
		"drifting-prev": server("1", "drifting@1.4.2", "drifting"),
		"unpaired":      server("1", "unpaired@1.0.0", ""),
	})
	var vd *studies.VersionDrift
	for _, r := range res.Servers {
		if r.Status != studies.StatusScanned {
			t.Fatalf("%s: %s (%s)", r.Name, r.Status, r.Reason)
		}
		switch {
		case r.Name == "drifting":
			vd = r.VersionDrift
		case r.VersionDrift != nil:
			t.Errorf("%s carries a version drift", r.Name)
		}
	}
	if vd == nil {
		t.Fatal("the current release carries no version drift")
	}
	var got []string
	for _, c := range vd.Changes {
		got = append(got, fmt.Sprintf("%s %s %s %s %s breaking=%v", c.Severity, c.Rule, c.Tool, c.Pointer, c.Kind, c.Breaking))
	}
	want := []string{
		"warn BRK-TOOL-DESCRIPTION-CHANGED echo /description CHG-DESCRIPTION-CHANGED breaking=false",
		"error BRK-TOOL-REMOVED export_csv  CHG-TOOL-REMOVED breaking=true",
		"error BRK-IN-REQUIRED-PROPERTY-ADDED get_user /inputSchema/properties/tenant CHG-PROPERTY-ADDED breaking=true",
		"error BRK-IN-PROPERTY-RENAMED search /inputSchema/properties/q CHG-PROPERTY-RENAMED breaking=true",
		"info BRK-TOOL-ADDED summarize  CHG-TOOL-ADDED breaking=false",
		"error BRK-IN-ENUM-VALUE-REMOVED weather /inputSchema/properties/units/enum CHG-ENUM-VALUE-REMOVED breaking=true",
		"info BRK-OUT-ENUM-VALUE-REMOVED weather /outputSchema/properties/units/enum CHG-ENUM-VALUE-REMOVED breaking=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n%q\nwant\n%q", got, want)
	}
	head := studies.VersionDrift{Previous: vd.Previous, From: vd.From, To: vd.To, Step: vd.Step, Compared: vd.Compared,
		Breaking: vd.Breaking, ToolsRemoved: vd.ToolsRemoved, ToolsAdded: vd.ToolsAdded,
		DescriptionsChanged: vd.DescriptionsChanged, SemverViolation: vd.SemverViolation}
	wantHead := studies.VersionDrift{Previous: "drifting-prev", From: "1.4.2", To: "1.5.0", Step: "minor", Compared: true,
		Breaking: 4, ToolsRemoved: []string{"export_csv"}, ToolsAdded: []string{"summarize"},
		DescriptionsChanged: []string{"echo"}, SemverViolation: true}
	if !reflect.DeepEqual(head, wantHead) {
		t.Errorf("pair %+v\nwant %+v", head, wantHead)
	}
	d := res.Aggregates.VersionDrift
	if d.Pairs != 1 || d.Compared != 1 || d.SemverViolations != 1 || d.WithRemovals != 1 || d.ToolsRemoved != 1 || d.DescriptionsChanged != 1 || d.Steps["minor"] != 1 {
		t.Errorf("aggregates %+v", d)
	}
	// The previous release is left out of the weighted figures, as a
	// variant is: two of the three rows count.
	if n := res.Aggregates.ServerWeighted.Servers; n != 2 {
		t.Errorf("server-weighted over %d servers, want 2", n)
	}
}

// A tool missing from the newer release's default listing is not called
// removed when a configuration known for the package lists it: the study
// lists the server under each configuration too (here the testbed's
// "--version 1", which serves the tool set the previous release had).
func TestVersionDriftConfigurations(t *testing.T) {
	bin := studyBinary(t, "subprocess study")
	dir := t.TempDir()
	res := runStudy(t, dir, map[string]any{
		"drifting": map[string]any{"command": bin, "args": []string{"testbed", "--profile", "drifting", "--version", "2", "--drift-after", "-1"},
			"package": "drifting@1.5.0",
			"configurations": []map[string]any{
				{"name": "tool set 1", "args": []string{"--version", "1"}, "source": "the testbed's --version flag"},
			}},
		"drifting-prev": map[string]any{"command": bin, "args": []string{"testbed", "--profile", "drifting", "--version", "1", "--drift-after", "-1"},
			"package": "drifting@1.4.2", "previous_of": "drifting"},
	})
	var row studies.Row
	for _, r := range res.Servers {
		if r.Name == "drifting" {
			row = r
		}
	}
	if len(row.Configurations) != 1 {
		t.Fatalf("configurations %+v", row.Configurations)
	}
	c := row.Configurations[0]
	if c.Status != studies.StatusScanned || !c.Complete || !slices.Contains(c.Tools, "export_csv") || !slices.Equal(c.Args, []string{"--version", "1"}) {
		t.Errorf("configuration %+v", c)
	}
	vd := row.VersionDrift
	if vd == nil || len(vd.ToolsRemoved) != 0 || !slices.Equal(vd.ToolsUnlisted, []string{"export_csv"}) {
		t.Fatalf("version drift %+v", vd)
	}
	for _, ch := range vd.Changes {
		if ch.Tool == "export_csv" && (ch.Rule != "BRK-TOOL-UNLISTED" || ch.Message != `tool "export_csv" no longer listed by default (listed with --version 1)`) {
			t.Errorf("change %+v", ch)
		}
	}
	d := res.Aggregates.VersionDrift
	if d.WithRemovals != 0 || d.ToolsRemoved != 0 || d.WithUnlisted != 1 || d.ToolsUnlisted != 1 {
		t.Errorf("aggregates %+v", d)
	}
	var md bytes.Buffer
	if err := pages.Markdown(&md, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "0 removed 0 tools") || !strings.Contains(md.String(), "1 no longer list 1 tool by default") {
		t.Errorf("summary:\n%s", md.String())
	}
}

// runStudy writes servers (an mcpServers object) to dir/servers.json and
// runs the study over it.
func runStudy(t *testing.T, dir string, servers map[string]any) *studies.Results {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "servers.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := studies.ParseSpec(b, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*testutil.Hang)
	defer cancel()
	res, err := studies.Run(ctx, spec, studies.Options{Jobs: 2, Deadline: testutil.Hang, RequestTimeout: testutil.Hang, SkipSecondConnection: true, TempDir: t.TempDir(), GradePairs: versiondrift.Grade})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
