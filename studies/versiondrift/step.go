package versiondrift

import (
	"slices"
	"strconv"
	"strings"
)

// Step names the step from one version to another (see
// studies.VersionDrift.Step).
func Step(from, to string) string {
	if CalendarVersion(from) || CalendarVersion(to) {
		return "calendar"
	}
	a, okA := parseSemver(from)
	b, okB := parseSemver(to)
	if !okA || !okB {
		return "unknown"
	}
	if c := slices.Compare(a, b); c == 0 {
		return "same"
	} else if c > 0 {
		return "downgrade"
	}
	lead := 0
	for lead < 2 && a[lead] == 0 {
		lead++
	}
	first := 0
	for first < 3 && a[first] == b[first] {
		first++
	}
	switch {
	case first <= lead:
		return "major"
	case first == lead+1:
		return "minor"
	}
	return "patch"
}

// CalendarVersion reports whether a version is a calendar version: its
// first component (after a leading v) is a year from 2000 to 2099, or a
// date YYYYMMDD of those years (2025.4.8, 2025.04.08, 2026.8.31-1,
// 20250408.0.0, v2024.1). Such a version numbers releases by date and
// promises nothing of compatibility, so no step between it and another
// version can violate semantic versioning.
func CalendarVersion(v string) bool {
	v = strings.TrimPrefix(v, "v")
	first, _, _ := strings.Cut(v, ".")
	if i := strings.IndexAny(first, "-+"); i >= 0 {
		first = first[:i]
	}
	n, err := strconv.Atoi(first)
	if err != nil || strings.HasPrefix(first, "0") {
		return false
	}
	switch len(first) {
	case 4:
		return n >= 2000 && n <= 2099
	case 8:
		y, m, d := n/10000, n/100%100, n%100
		return y >= 2000 && y <= 2099 && m >= 1 && m <= 12 && d >= 1 && d <= 31
	}
	return false
}

// parseSemver reads MAJOR.MINOR.PATCH (a leading v, a pre-release and
// build metadata ignored).
func parseSemver(v string) ([]int, bool) {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return nil, false
	}
	out := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}
