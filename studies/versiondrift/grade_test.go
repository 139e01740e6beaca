package versiondrift

import (
	"testing"

	"github.com/mcpdrill/mcpdrill/studies"
)

func TestSemverStep(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"1.2.3", "2.0.0", "major"},
		{"1.2.3", "1.3.0", "minor"},
		{"1.2.3", "1.2.4", "patch"},
		{"v1.2.3", "v1.2.3", "same"},
		{"1.3.0", "1.2.9", "downgrade"},
		// Before 1.0 the leftmost non-zero component is the major one.
		{"0.2.3", "0.3.0", "major"},
		{"0.2.3", "0.2.4", "minor"},
		{"0.0.3", "0.0.4", "major"},
		{"0.9.1", "1.0.0", "major"},
		// Pre-releases and build metadata are ignored.
		{"1.2.3-beta.1", "1.2.3+build.5", "same"},
		// Calendar versions promise nothing: never a semver step.
		{"2025.4.8", "2026.8.31", "calendar"},
		{"2025.3.28", "2025.4.8", "calendar"},
		{"2026.7.4", "2026.8.31", "calendar"},
		{"0.6.2", "2025.5.12", "calendar"},
		{"v2024.1", "v2024.2", "calendar"},
		{"20250408.0.0", "20250501.0.0", "calendar"},
		{"2026.8.31-1", "2026.9.1", "calendar"},
		// Not years, not dates: semantic versions.
		{"1999.1.0", "1999.2.0", "minor"},
		{"3000.0.0", "3000.1.0", "minor"},
		{"20251301.0.0", "20251302.0.0", "major"},
		{"0202.1.1", "0202.1.2", "patch"},
		{"1.2", "1.3.0", "unknown"},
		{"", "1.0.0", "unknown"},
		{"latest", "1.0.0", "unknown"},
	} {
		if got := Step(tc.from, tc.to); got != tc.want {
			t.Errorf("Step(%q, %q) = %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
}

// A pair is graded only when both releases were scanned and listed whole.
func TestGradeVersionsNotCompared(t *testing.T) {
	row := func(status string, listed, whole bool) studies.Row {
		r := studies.Row{Status: status}
		if listed {
			r.SetListing(nil, whole)
		}
		return r
	}
	for _, tc := range []struct {
		name      string
		prev, cur studies.Row
		reason    string
	}{
		{"previous failed", row(studies.StatusFailed, false, false), row(studies.StatusScanned, true, true), "the previous release was not scanned"},
		{"current failed", row(studies.StatusScanned, true, true), row(studies.StatusFailed, false, false), "the current release was not scanned"},
		{"capped listing", row(studies.StatusScanned, true, false), row(studies.StatusScanned, true, true), "a tools/list was incomplete (capped, looping or unreadable entries): tool removals cannot be told apart from unread tools"},
	} {
		vd := Pair(&tc.prev, &tc.cur, "1.0.0", "1.1.0")
		if vd.Compared || vd.Reason != tc.reason || vd.Step != "minor" || vd.SemverViolation {
			t.Errorf("%s: %+v", tc.name, vd)
		}
	}
}

// A release and the release before it land in the same shard, whatever
// their names' order, so the shard grades the pair; the shards still
// cover every entry once.
func TestShardKeepsVersionPairs(t *testing.T) {
	entries := []studies.Entry{{}, {}, {}, {}, {}, {}}
	for i, n := range []string{"a", "a-old", "b", "c", "c-old", "d"} {
		entries[i].Name = n
	}
	entries[1].PreviousOf, entries[4].PreviousOf = "a", "c"
	seen := map[string]int{}
	for k := 1; k <= 3; k++ {
		names := map[string]bool{}
		for _, e := range (studies.Shard{Index: k, Count: 3}).Select(entries) {
			names[e.Name] = true
			seen[e.Name]++
		}
		for _, p := range [][2]string{{"a", "a-old"}, {"c", "c-old"}} {
			if names[p[0]] != names[p[1]] {
				t.Errorf("shard %d/3 holds %s without %s or the reverse: %v", k, p[0], p[1], names)
			}
		}
	}
	for _, e := range entries {
		if seen[e.Name] != 1 {
			t.Errorf("%s is in %d shards", e.Name, seen[e.Name])
		}
	}
}

// A tool missing from the default listing is removed only when every known
// configuration was listed whole without it.
func TestUnlisted(t *testing.T) {
	all := studies.ConfigScan{Name: "all", Env: []string{"T=all"}, Status: studies.StatusScanned, Complete: true, Tools: []string{"a", "b"}}
	partial := studies.ConfigScan{Name: "capped", Env: []string{"T=x"}, Status: studies.StatusScanned, Tools: []string{"c"}}
	failed := studies.ConfigScan{Name: "pro", Env: []string{"PRO=true"}, Status: studies.StatusFailed, Reason: "timeout", Tools: []string{}}
	for _, tc := range []struct {
		name    string
		configs []studies.ConfigScan
		tool    string
		want    string
	}{
		{"no configuration known", nil, "a", ""},
		{"listed under one", []studies.ConfigScan{all}, "b", "listed with T=all"},
		{"absent under every one", []studies.ConfigScan{all}, "z", ""},
		{"listed by an incomplete listing", []studies.ConfigScan{partial}, "c", "listed with T=x"},
		{"not established: incomplete", []studies.ConfigScan{all, partial}, "z", "not established with T=x: that listing did not complete"},
		{"not established: failed", []studies.ConfigScan{failed, all}, "z", "not established with PRO=true: that listing did not complete"},
	} {
		if got := Unlisted(tc.configs, tc.tool); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
