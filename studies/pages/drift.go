package pages

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/studies"
)

// driftRows are the rows with a version pair: the compared pairs first,
// semver violations first among them, then by name; then the pairs not
// compared, by name (the pages fold those).
func driftRows(rows []studies.Row) (compared, notCompared []studies.Row) {
	for _, r := range rows {
		switch {
		case r.VersionDrift == nil:
		case r.VersionDrift.Compared:
			compared = append(compared, r)
		default:
			notCompared = append(notCompared, r)
		}
	}
	slices.SortStableFunc(compared, func(a, b studies.Row) int {
		return cmp.Or(-cmp.Compare(b2i(a.VersionDrift.SemverViolation), b2i(b.VersionDrift.SemverViolation)), cmp.Compare(a.Name, b.Name))
	})
	slices.SortStableFunc(notCompared, func(a, b studies.Row) int { return cmp.Compare(a.Name, b.Name) })
	return compared, notCompared
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// driftSummary is a pair's changes in a few words, e.g. "3 changes (1
// breaking): BRK-TOOL-REMOVED 1, BRK-TOOL-DESCRIPTION-CHANGED 2".
func driftSummary(vd *studies.VersionDrift) string {
	if !vd.Compared {
		return "not compared: " + vd.Reason
	}
	if len(vd.Changes) == 0 {
		return "no change"
	}
	undecided := ""
	if vd.Undetermined > 0 {
		undecided = fmt.Sprintf(", %d undetermined", vd.Undetermined)
	}
	return fmt.Sprintf("%d changes (%d breaking%s): %s", len(vd.Changes), vd.Breaking, undecided, strings.Join(sortedCounts(vd.ByRule), ", "))
}
