package testbed

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteList writes the profile catalogue as an aligned table: name, kind,
// revisions and summary, sorted by name. `mcpdrill testbed --list` prints it.
func WriteList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tKIND\tREVISIONS\tSUMMARY")
	for _, p := range Profiles() {
		kind := "fixture"
		if p.Hostile {
			kind = "hostile"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, kind, revRange(p.Revisions), p.Summary)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("testbed: list: %w", err)
	}
	return nil
}

// revRange renders newest-first revisions compactly.
func revRange(revs []string) string {
	switch len(revs) {
	case 0:
		return "-"
	case 1:
		return revs[0]
	}
	return revs[len(revs)-1] + ".." + revs[0]
}
