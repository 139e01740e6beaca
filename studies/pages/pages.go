package pages

import (
	"bytes"

	"github.com/mcpdrill/mcpdrill/studies"
)

// Report files: the names of the study's summary and scoreboard.
const (
	SummaryFile    = "SUMMARY.md"
	ScoreboardFile = "index.html"
)

// Pages are the report of a study, by file name: SUMMARY.md (Markdown) and
// index.html (HTML). The aggregates are a function of the rows, so they are
// recomputed first: a document written before an aggregate was added
// reports it too.
func Pages(r *studies.Results) (map[string][]byte, error) {
	r.Finalize()
	var md, page bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		return nil, err
	}
	if err := HTML(&page, r); err != nil {
		return nil, err
	}
	return map[string][]byte{SummaryFile: md.Bytes(), ScoreboardFile: page.Bytes()}, nil
}
