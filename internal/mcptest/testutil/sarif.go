package testutil

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sarifSchema is the OASIS SARIF 2.1.0 schema (testdata/README.md says where
// it comes from).
//
//go:embed testdata/sarif-schema-2.1.0.json
var sarifSchema []byte

const sarifSchemaURL = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

var compileSARIF = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sarifSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(sarifSchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(sarifSchemaURL)
})

// GitHub code scanning's limits on one uploaded SARIF file (docs.github.com,
// "SARIF support for code scanning" and "SARIF results exceed one or more
// limits").
const (
	githubMaxRuns               = 20
	githubMaxResultsPerRun      = 25000
	githubMaxRulesPerRun        = 25000
	githubMaxLocationsPerResult = 1000
)

// SARIFLog is the part of a SARIF log CheckSARIF returns for further checks.
type SARIFLog struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID               string `json:"id"`
					ShortDescription struct{ Text string }
					FullDescription  struct{ Text string }
					Help             struct{ Text, Markdown string }
					HelpURI          string `json:"helpUri"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []SARIFResult `json:"results"`
	} `json:"runs"`
}

// SARIFResult is one result of a SARIFLog.
type SARIFResult struct {
	RuleID    string `json:"ruleId"`
	RuleIndex *int   `json:"ruleIndex"`
	Level     string `json:"level"`
	Message   struct{ Text string }
	Locations []struct {
		PhysicalLocation *struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
			Region *struct {
				StartLine int `json:"startLine"`
			} `json:"region"`
		} `json:"physicalLocation"`
	} `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties"`
}

// URI is the result's first artifact URI.
func (r SARIFResult) URI() string {
	if len(r.Locations) == 0 || r.Locations[0].PhysicalLocation == nil {
		return ""
	}
	return r.Locations[0].PhysicalLocation.ArtifactLocation.URI
}

// Line is the result's first start line (0 without a region).
func (r SARIFResult) Line() int {
	if len(r.Locations) == 0 || r.Locations[0].PhysicalLocation == nil || r.Locations[0].PhysicalLocation.Region == nil {
		return 0
	}
	return r.Locations[0].PhysicalLocation.Region.StartLine
}

// CheckSARIF validates a SARIF log against the vendored SARIF 2.1.0 schema
// and against what GitHub code scanning requires of an upload, written out
// as assertions: every result has a physical location with an artifact URI
// into the repository (relative, or a file URI) and a start line, partial
// fingerprints, a rule id listed in its run's rules (at its ruleIndex) and
// a message; every rule has a short and full description, help text and a
// help link; at most 20 runs, 25,000 results and 25,000 rules a run, 1,000
// locations a result. It returns the log for further checks.
func CheckSARIF(t testing.TB, data []byte) SARIFLog {
	t.Helper()
	sch, err := compileSARIF()
	if err != nil {
		t.Fatalf("compile the SARIF schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("SARIF is not JSON: %v\n%s", err, data)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("SARIF fails the 2.1.0 schema: %v", err)
	}
	var log SARIFLog
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) == 0 || len(log.Runs) > githubMaxRuns {
		t.Errorf("github: %d runs, want 1 to %d", len(log.Runs), githubMaxRuns)
	}
	for ri, run := range log.Runs {
		d := run.Tool.Driver
		if d.Name == "" {
			t.Errorf("github: run %d: tool.driver.name is empty", ri)
		}
		if len(run.Results) > githubMaxResultsPerRun {
			t.Errorf("github: run %d: %d results, more than %d", ri, len(run.Results), githubMaxResultsPerRun)
		}
		if len(d.Rules) > githubMaxRulesPerRun {
			t.Errorf("github: run %d: %d rules, more than %d", ri, len(d.Rules), githubMaxRulesPerRun)
		}
		index := map[string]int{}
		for i, r := range d.Rules {
			if r.ID == "" {
				t.Errorf("github: run %d: rule %d has no id", ri, i)
			}
			if _, dup := index[r.ID]; dup {
				t.Errorf("github: run %d: rule %s listed twice", ri, r.ID)
			}
			index[r.ID] = i
			if r.ShortDescription.Text == "" || r.FullDescription.Text == "" || r.Help.Text == "" {
				t.Errorf("github: rule %s lacks shortDescription, fullDescription or help text", r.ID)
			}
			if u, err := url.Parse(r.HelpURI); err != nil || u.Scheme != "https" || u.Host == "" {
				t.Errorf("github: rule %s: helpUri %q is not an https link", r.ID, r.HelpURI)
			}
		}
		for i, res := range run.Results {
			where := res.RuleID
			if res.RuleID == "" {
				t.Errorf("github: run %d: result %d has no ruleId", ri, i)
			}
			if at, ok := index[res.RuleID]; !ok {
				t.Errorf("github: result %d: ruleId %s is not in tool.driver.rules", i, where)
			} else if res.RuleIndex != nil && *res.RuleIndex != at {
				t.Errorf("github: result %d: ruleIndex %d names %s, not %s", i, *res.RuleIndex, d.Rules[*res.RuleIndex].ID, where)
			}
			if res.Message.Text == "" {
				t.Errorf("github: result %d (%s): empty message", i, where)
			}
			if len(res.Locations) == 0 || len(res.Locations) > githubMaxLocationsPerResult {
				t.Errorf("github: result %d (%s): %d locations, want 1 to %d", i, where, len(res.Locations), githubMaxLocationsPerResult)
			}
			for _, l := range res.Locations {
				pl := l.PhysicalLocation
				if pl == nil || pl.ArtifactLocation.URI == "" {
					t.Errorf("github: result %d (%s): a location without physicalLocation.artifactLocation.uri (GitHub: expected artifact location)", i, where)
					continue
				}
				checkArtifactURI(t, where, pl.ArtifactLocation.URI)
				if pl.Region == nil || pl.Region.StartLine < 1 {
					t.Errorf("github: result %d (%s): region.startLine missing or < 1", i, where)
				}
			}
			if len(res.PartialFingerprints) == 0 {
				t.Errorf("github: result %d (%s): no partialFingerprints", i, where)
			}
			for k, v := range res.PartialFingerprints {
				if k == "" || v == "" {
					t.Errorf("github: result %d (%s): empty partialFingerprints entry %q=%q", i, where, k, v)
				}
			}
		}
	}
	return log
}

// checkArtifactURI accepts what GitHub maps to a file of the checkout: a
// relative reference that stays inside the repository, or a file URI.
func checkArtifactURI(t testing.TB, where, uri string) {
	t.Helper()
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		t.Errorf("github: %s: artifact uri %q: %v", where, uri, err)
	case u.Scheme == "file":
	case u.Scheme != "" || u.Host != "":
		t.Errorf("github: %s: artifact uri %q is neither relative nor a file URI", where, uri)
	case strings.HasPrefix(u.Path, "/") || u.Path == ".." || strings.HasPrefix(u.Path, "../") || strings.Contains(u.Path, "/../"):
		t.Errorf("github: %s: artifact uri %q leaves the repository", where, uri)
	}
}
