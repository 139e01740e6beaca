package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// SARIF 2.1.0 document, reduced to the members mcpdrill fills.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool        `json:"tool"`
	AutomationDetails *sarifAutomation `json:"automationDetails,omitempty"`
	Results           []sarifResult    `json:"results"`
	Properties        map[string]any   `json:"properties,omitempty"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string        `json:"id"`
	ShortDescription     sarifText     `json:"shortDescription"`
	FullDescription      sarifText     `json:"fullDescription"`
	Help                 sarifHelp     `json:"help"`
	HelpURI              string        `json:"helpUri,omitempty"`
	DefaultConfiguration sarifDefaults `json:"defaultConfiguration"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifDefaults struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          map[string]any     `json:"properties,omitempty"`
}

// sarifSuppression marks a result the user acknowledged (SARIF 2.1.0
// §3.35): kind external, since the acknowledgement lives in a file of its
// own, not in the code.
type sarifSuppression struct {
	Kind   string `json:"kind"`
	Status string `json:"status"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// SARIFMaxResults is the most results GitHub code scanning accepts in one
// run; WriteSARIF keeps the most serious ones and counts the rest.
const SARIFMaxResults = 25000

// FingerprintKey names mcpdrill's entry in a result's partialFingerprints.
const FingerprintKey = "mcpdrill/v1"

// SARIFLevel maps a severity to a SARIF result level.
func SARIFLevel(s Severity) string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarn:
		return "warning"
	}
	return "note"
}

// digits are masked out of a message before it is fingerprinted, so a count
// or a size in the text does not make a new alert of the same finding.
var digits = regexp.MustCompile(`[0-9]+`)

// Fingerprint identifies a result across runs: a hash of its rule, subject,
// tool, pointer, change id and message (digits masked), never of its line or
// its position in the report, so that it survives reordered files and
// reordered output.
func Fingerprint(r Result) string {
	key := strings.Join([]string{r.Rule, r.Subject, r.Tool, r.Pointer, r.Change, digits.ReplaceAllString(r.Message, "#")}, "\x00")
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// artifactURI writes a location path as a SARIF artifact URI: a relative
// URI reference for a path inside the repository, a file URI otherwise.
func artifactURI(p string) string {
	if path.IsAbs(p) {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// WriteSARIF writes a run's results as a SARIF 2.1.0 log with one run, in
// the subset GitHub code scanning accepts: every result has a physical
// location (the user's file and the line of its entry), a fingerprint, a
// rule id listed in the run's rules, and every rule a description, help
// text and a link into METHODOLOGY.md. A rule missing from the catalogue is
// still listed, described by its id. Results are written in a stable order,
// at most SARIFMaxResults of them (the most serious first).
func WriteSARIF(w io.Writer, o Output) error {
	rs := o.sortedResults()
	omitted := 0
	if len(rs) > SARIFMaxResults {
		omitted = len(rs) - SARIFMaxResults
		rs = rs[:SARIFMaxResults]
	}
	idx := map[string]int{}
	rules := []sarifRule{}
	results := make([]sarifResult, 0, len(rs))
	for _, r := range rs {
		i, ok := idx[r.Rule]
		if !ok {
			i = len(rules)
			idx[r.Rule] = i
			rules = append(rules, sarifRuleOf(o.Catalogue, r.Finding))
		}
		results = append(results, sarifResultOf(r, i))
	}
	run := sarifRun{
		Tool:    sarifTool{Driver: sarifDriver{Name: "mcpdrill", Version: o.Version, InformationURI: RepositoryURL, Rules: rules}},
		Results: results,
	}
	if o.Category != "" {
		// The id a category becomes when the uploader writes it (GitHub's
		// upload-sarif appends the "/"); an uploader applies its own
		// category only to a run without automationDetails.
		id := o.Category
		if !strings.HasSuffix(id, "/") {
			id += "/"
		}
		run.AutomationDetails = &sarifAutomation{ID: id}
	}
	if omitted > 0 {
		run.Properties = map[string]any{"omittedResults": omitted}
	}
	doc := sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}
	if err := jsonvalue.WriteIndented(w, doc); err != nil {
		return fmt.Errorf("report: write SARIF: %w", err)
	}
	return nil
}

func sarifRuleOf(cat Catalogue, f Finding) sarifRule {
	r, ok := cat.Lookup(f.Rule)
	if !ok {
		r = Rule{ID: f.Rule, Severity: f.Severity, Title: f.Rule, Detail: f.Rule}
	}
	help := HelpURI(r.ID)
	text := r.Detail + "\n\n`mcpdrill rules " + r.ID + "` explains this rule."
	if len(r.Requirements) > 0 {
		text += " It grades " + requirementList(r.Requirements) + "."
	}
	md := text
	if help != "" {
		text += " Method: " + help
		md += " Method: [METHODOLOGY.md](" + help + ")."
	}
	return sarifRule{ID: r.ID, ShortDescription: sarifText{r.Title}, FullDescription: sarifText{r.Detail},
		Help: sarifHelp{Text: text, Markdown: md}, HelpURI: help,
		DefaultConfiguration: sarifDefaults{SARIFLevel(r.Severity)}}
}

// sarifMessage is a result's message as SARIF plain text: safe lines
// (safetext.Block) with its square brackets escaped by a backslash (and a
// backslash before one escaped too), since a viewer reads "[text](target)"
// in a plain-text message as an embedded link (SARIF 2.1.0, §3.11.6).
func sarifMessage(s string) string {
	s = safetext.Block(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '[' || c == ']' || c == '\\' && i+1 < len(s) && (s[i+1] == '[' || s[i+1] == ']') {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// requirementList words the requirements a rule grades for its help text.
func requirementList(gs []RuleRequirement) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.String()
	}
	return strings.Join(parts, ", ")
}

func sarifResultOf(r Result, ruleIndex int) sarifResult {
	line := max(r.Location.Line, 1)
	loc := sarifLocation{PhysicalLocation: sarifPhysical{
		ArtifactLocation: sarifArtifact{URI: artifactURI(r.Location.Path)},
		Region:           sarifRegion{StartLine: line},
	}}
	if r.Tool != "" || r.Pointer != "" {
		kind := "member"
		if r.Pointer == "" {
			kind = "function"
		}
		loc.LogicalLocations = []sarifLogical{{Name: safetext.Text(r.Tool), FullyQualifiedName: safetext.Text(r.Tool + r.Pointer), Kind: kind}}
	}
	res := sarifResult{RuleID: r.Rule, RuleIndex: ruleIndex, Level: SARIFLevel(r.Severity), Message: sarifText{sarifMessage(r.Text())},
		Locations: []sarifLocation{loc}, PartialFingerprints: map[string]string{FingerprintKey: Fingerprint(r)}}
	if r.Expected {
		res.Suppressions = []sarifSuppression{{Kind: "external", Status: "accepted"}}
	}
	props := map[string]any{}
	if r.Subject != "" {
		props["server"] = r.Subject
	}
	if r.Change != "" {
		props["change"] = r.Change
	}
	if r.Breaking != nil {
		props["breaking"] = *r.Breaking
	}
	if r.Evidence != "" {
		props["evidence"] = r.Evidence
	}
	if q := r.Requirement; q != nil {
		props["requirement"] = q.ID
		props["requirementLevel"] = q.Level
		props["specRevision"] = q.Revision
		props["specSection"] = q.Section
		props["specUrl"] = q.URL
	}
	if len(props) > 0 {
		res.Properties = props
	}
	return res
}
