package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes findings as a JUnit XML report: one test suite, one test
// case per finding (named by rule, tool and pointer). A finding at or above
// threshold is a failure; one below it is a passing case whose message is
// kept in system-out, so CI dashboards show the same list as the table.
// With no findings a single passing case named suite is written.
func WriteJUnit(w io.Writer, suite string, threshold Severity, fs []Finding) error {
	fs = append([]Finding(nil), fs...)
	Sort(fs)
	s := junitSuite{Name: suite}
	for _, f := range fs {
		name := f.Rule
		if f.Tool != "" {
			name += " " + f.Tool
		}
		if f.Pointer != "" {
			name += " " + f.Pointer
		}
		c := junitCase{Name: name, Classname: suite + "." + strings.ToLower(f.Rule)}
		text := fmt.Sprintf("%s [%s] %s", f.Rule, f.Severity, f.Message)
		if f.Change != "" {
			text += " (" + f.Change + ")"
		}
		if threshold != "" && f.Severity.Rank() >= threshold.Rank() {
			c.Failure = &junitFailure{Message: f.Message, Type: string(f.Severity), Text: text}
			s.Failures++
		} else {
			c.SystemOut = text
		}
		s.Cases = append(s.Cases, c)
	}
	if len(s.Cases) == 0 {
		s.Cases = []junitCase{{Name: suite, Classname: suite}}
	}
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: suite, Tests: s.Tests, Failures: s.Failures, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("report: write JUnit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("report: write JUnit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("report: write JUnit: %w", err)
	}
	return nil
}
