package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// SARIF 2.1.0 document, reduced to the members mcpdrill fills.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
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
	DefaultConfiguration sarifDefaults `json:"defaultConfiguration"`
}

type sarifDefaults struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations,omitempty"`
	Properties map[string]any  `json:"properties,omitempty"`
}

type sarifLocation struct {
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifLogical struct {
	Name               string `json:"name,omitempty"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

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

// WriteSARIF writes findings as a SARIF 2.1.0 log with one run. Rules named
// by findings are described from the catalogue (a rule missing from it is
// still listed, with its id as its description). Findings are written in
// Sort order; locations are logical (tool name plus JSON pointer), since an
// MCP server's tools have no source file.
func WriteSARIF(w io.Writer, toolName, toolVersion string, cat Catalogue, fs []Finding) error {
	fs = append([]Finding(nil), fs...)
	Sort(fs)
	idx := map[string]int{}
	var rules []sarifRule
	for _, f := range fs {
		if _, ok := idx[f.Rule]; ok {
			continue
		}
		r, ok := cat.Lookup(f.Rule)
		if !ok {
			r = Rule{ID: f.Rule, Severity: f.Severity, Title: f.Rule, Detail: f.Rule}
		}
		idx[f.Rule] = len(rules)
		rules = append(rules, sarifRule{ID: r.ID, ShortDescription: sarifText{r.Title},
			FullDescription: sarifText{r.Detail}, DefaultConfiguration: sarifDefaults{SARIFLevel(r.Severity)}})
	}
	results := make([]sarifResult, 0, len(fs))
	for _, f := range fs {
		res := sarifResult{RuleID: f.Rule, RuleIndex: idx[f.Rule], Level: SARIFLevel(f.Severity), Message: sarifText{f.Message}}
		if f.Tool != "" || f.Pointer != "" {
			fq := f.Tool + f.Pointer
			kind := "member"
			if f.Pointer == "" {
				kind = "function"
			}
			res.Locations = []sarifLocation{{LogicalLocations: []sarifLogical{{Name: f.Tool, FullyQualifiedName: fq, Kind: kind}}}}
		}
		props := map[string]any{}
		if f.Change != "" {
			props["change"] = f.Change
		}
		if f.Breaking != nil {
			props["breaking"] = *f.Breaking
		}
		if f.Evidence != "" {
			props["evidence"] = f.Evidence
		}
		if len(props) > 0 {
			res.Properties = props
		}
		results = append(results, res)
	}
	if rules == nil {
		rules = []sarifRule{}
	}
	doc := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{{Tool: sarifTool{Driver: sarifDriver{Name: toolName, Version: toolVersion, Rules: rules}}, Results: results}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("report: write SARIF: %w", err)
	}
	return nil
}
