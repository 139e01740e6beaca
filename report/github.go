package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// annotationLevel maps a severity to a GitHub workflow command.
func annotationLevel(s Severity) string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarn:
		return "warning"
	}
	return "notice"
}

// escapeData escapes a workflow command's message as the Actions runner
// reads it back (%, CR and LF), after making its lines safe
// (safetext.Block: no control character but the line feed reaches the
// log, and the line feeds are written %0A).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(safetext.Block(s))
}

// escapeProperty escapes a workflow command's property value: as a
// message, and also ':' and ',', which end a value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(safetext.Text(s))
}

// WriteAnnotations writes a run's results as GitHub Actions workflow
// commands, one line each (::error, ::warning or ::notice by severity, with
// file, line and the rule id as title, followed by the id of the
// requirement the finding grades; the message ends with that requirement's
// level, revision and section), in a stable order, then one plain summary
// line. The runner turns each into an annotation on the file.
func WriteAnnotations(w io.Writer, o Output) error {
	rs := o.sortedResults()
	for _, r := range rs {
		title := r.Rule
		if q := r.Requirement; q != nil {
			title += " " + q.ID
		}
		props := []string{"file=" + escapeProperty(r.Location.Path), fmt.Sprintf("line=%d", max(r.Location.Line, 1)), "title=" + escapeProperty(title)}
		msg := r.Text()
		if q := r.Requirement; q != nil {
			msg += " [" + q.String() + "]"
		}
		level := annotationLevel(r.Severity)
		if r.Expected {
			// Acknowledged: visible, but not an error of this run.
			level, msg = "notice", msg+" (expected: acknowledged in the expected-findings file)"
		}
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", level, strings.Join(props, ","), escapeData(msg)); err != nil {
			return fmt.Errorf("report: write annotations: %w", err)
		}
	}
	c := map[Severity]int{}
	expected := 0
	for _, r := range rs {
		if r.Expected {
			expected++
			continue
		}
		c[r.Severity]++
	}
	tail := ""
	if expected > 0 {
		tail = fmt.Sprintf(", %d expected", expected)
	}
	if _, err := fmt.Fprintf(w, "mcpdrill %s: %d error(s), %d warning(s), %d info%s\n", o.Command, c[SeverityError], c[SeverityWarn], c[SeverityInfo], tail); err != nil {
		return fmt.Errorf("report: write annotations: %w", err)
	}
	return nil
}
