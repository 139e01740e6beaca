package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func junitTime(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes a run as a JUnit XML report: one test suite, one test
// case per check with its time (0 when the check was not timed on its own),
// and one more test case for each finding no check claims. A case fails
// when one of its findings is at or above the threshold, or when its check
// failed without a finding; a case whose findings are all below the
// threshold is written as <skipped> with the most serious one as its
// message, so warnings stay visible without failing the build; a check that
// did not run or does not apply is <skipped> with the reason. Every
// classname is "mcpdrill.COMMAND.CLASS" with no spaces.
func WriteJUnit(w io.Writer, o Output) error {
	prefix := "mcpdrill." + strings.Join(strings.Fields(o.Command), "-") + "."
	claimed := make([][]Result, len(o.Checks))
	var rest []Result
next:
	for _, r := range o.sortedResults() {
		for i, c := range o.Checks {
			if c.Claims != nil && c.Claims(r) {
				claimed[i] = append(claimed[i], r)
				continue next
			}
		}
		rest = append(rest, r)
	}
	s := junitSuite{Name: "mcpdrill " + o.Command, Time: junitTime(o.Duration)}
	for i, c := range o.Checks {
		s.Cases = append(s.Cases, o.junitCase(prefix+className(c.Class), c, claimed[i]))
	}
	for _, r := range rest {
		name := strings.Join(nonEmpty(r.Subject, r.Rule, r.Tool, r.Pointer), " ")
		s.Cases = append(s.Cases, o.junitCase(prefix+"findings", Check{Name: name}, []Result{r}))
	}
	if len(s.Cases) == 0 {
		s.Cases = []junitCase{{Name: o.Command, Classname: prefix + "run", Time: junitTime(o.Duration)}}
	}
	for _, c := range s.Cases {
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: s.Name, Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Time: s.Time, Suites: []junitSuite{s}}
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

// junitCase decides one test case from its check and the findings it
// claimed (sorted, most serious first).
//
// Names and messages may hold what a server said: a name or a message is
// made one safe line (safetext.Text) and a body safe lines (safetext.Block),
// since test reporters print them in CI logs.
func (o Output) junitCase(class string, c Check, rs []Result) junitCase {
	jc := o.junitCaseText(class, c, rs)
	jc.Name = safetext.Text(jc.Name)
	jc.SystemOut = safetext.Block(jc.SystemOut)
	if f := jc.Failure; f != nil {
		f.Message, f.Text = safetext.Text(f.Message), safetext.Block(f.Text)
	}
	if s := jc.Skipped; s != nil {
		s.Message = safetext.Text(s.Message)
	}
	return jc
}

// junitCaseText is junitCase before its text is made safe.
func (o Output) junitCaseText(class string, c Check, rs []Result) junitCase {
	jc := junitCase{Name: c.Name, Classname: class, Time: junitTime(c.Time)}
	lines := make([]string, 0, len(rs)+1)
	if c.Failed != "" {
		lines = append(lines, c.Failed)
	}
	var failing []Result
	for _, r := range rs {
		line := fmt.Sprintf("%s [%s] %s", r.Rule, r.Severity, r.Text())
		if r.Expected {
			line += " (expected)"
		}
		if q := r.Requirement; q != nil {
			line += " [" + q.String() + "]"
		}
		lines = append(lines, line)
		if o.fails(r) {
			failing = append(failing, r)
		}
	}
	text := strings.Join(lines, "\n")
	switch {
	case len(failing) > 0:
		jc.Failure = &junitFailure{Type: string(failing[0].Severity), Message: summary(failing[0], len(failing)), Text: text}
	case c.Failed != "" && o.Threshold != "":
		jc.Failure = &junitFailure{Type: string(SeverityError), Message: c.Failed, Text: text}
	case c.Failed != "":
		jc.Skipped, jc.SystemOut = &junitSkipped{Message: c.Failed}, text
	case len(rs) > 0:
		jc.Skipped, jc.SystemOut = &junitSkipped{Message: string(rs[0].Severity) + ": " + summary(rs[0], len(rs))}, text
	case c.Skipped != "":
		jc.Skipped = &junitSkipped{Message: c.Skipped}
	}
	return jc
}

// summary is the message of a test case: its first finding, and how many
// more there are.
func summary(r Result, n int) string {
	s := r.Rule + ": " + r.Text()
	if n > 1 {
		s += fmt.Sprintf(" (and %d more)", n-1)
	}
	return s
}

func className(s string) string {
	if s = strings.Join(strings.Fields(s), "-"); s == "" {
		return "checks"
	}
	return s
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
