package pages

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/mcpdrill/mcpdrill/studies"
)

// TestPagesRecomputeAggregates: the pages of a document whose aggregates
// were lost are those of the document as Run wrote it, and there are
// exactly the two files.
func TestPagesRecomputeAggregates(t *testing.T) {
	res := fixture(t)
	fixedMeta(res)
	var md, page bytes.Buffer
	if err := Markdown(&md, res); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, res); err != nil {
		t.Fatal(err)
	}
	res.Aggregates = studies.Aggregates{}
	got, err := Pages(res)
	if err != nil {
		t.Fatal(err)
	}
	if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, []string{SummaryFile, ScoreboardFile}) {
		t.Errorf("files %q", names)
	}
	if !bytes.Equal(got[SummaryFile], md.Bytes()) || !bytes.Equal(got[ScoreboardFile], page.Bytes()) {
		t.Error("the pages differ from Markdown and HTML of the document with its aggregates")
	}
}
