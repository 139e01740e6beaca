package clientdrill

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func result(t *testing.T, rep *Report, id string, tr Transport) Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Scenario == id && r.Transport == tr {
			return r
		}
	}
	t.Fatalf("no result for %s over %s", id, tr)
	return Result{}
}

// Each client behaviour gives its verdict over both transports.
func TestRunVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs client processes")
	}
	cases := []struct {
		mode, scenario string
		want           Outcome
		tags           []Tag
	}{
		{"good", "dropped-reply", TimedOut, []Tag{TagCancelled, TagRecovered}},
		{"good", "schema-lie", Accepted, []Tag{TagRecovered}},
		{"good", "tool-error-rpc", Surfaced, []Tag{TagRecovered}},
		{"good", "tool-error-result", Surfaced, []Tag{TagRecovered}},
		{"good", "unknown-id-reply", Delivered, []Tag{TagRecovered}},
		{"good", "unsolicited-request", Refused, []Tag{TagRecovered}},
		{"good", "list-changed", Stale, []Tag{TagRecovered}},
		{"good", "content-disagree", Both, []Tag{TagRecovered}},
		{"hang", "dropped-reply", Hung, []Tag{}},
		{"crash", "server-exit", Crashed, []Tag{}},
		{"quit", "server-exit", Crashed, []Tag{}},
		{"silent", "duplicate-reply", Completed, []Tag{}},
	}
	for _, tc := range cases {
		t.Run(tc.mode+"/"+tc.scenario, func(t *testing.T) {
			rep, err := Run(context.Background(), testOptions(t, tc.mode, tc.scenario))
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range []Transport{Stdio, HTTP} {
				r := result(t, rep, tc.scenario, tr)
				if r.Outcome != tc.want || !equalTags(r.Tags, tc.tags) {
					t.Errorf("%s: %s %v, want %s %v (evidence %+v)", tr, r.Outcome, r.Tags, tc.want, tc.tags, r.Evidence)
				}
			}
		})
	}
}

func equalTags(a, b []Tag) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The same client and seed give the same JSON, byte for byte.
func TestRunIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs client processes")
	}
	var docs [2][]byte
	for i := range docs {
		rep, err := Run(context.Background(), testOptions(t, "good", "dropped-reply", "duplicate-reply", "schema-lie", "late-reply"))
		if err != nil {
			t.Fatal(err)
		}
		docs[i], _ = json.Marshal(rep)
	}
	if !bytes.Equal(docs[0], docs[1]) {
		t.Fatalf("two runs differ:\n%s\n%s", docs[0], docs[1])
	}
}

// Abuse: the command is argv, never a shell line.
func TestCommandIsNotAShellLine(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	o := testOptions(t, "good", "duplicate-reply")
	o.Command = []string{"true; touch " + marker}
	if _, err := Run(context.Background(), o); err == nil {
		t.Fatal("a shell line ran as a command")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a shell ran the command line")
	}
}
