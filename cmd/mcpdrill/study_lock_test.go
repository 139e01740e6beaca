package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/studies/install"
)

// TestLockLineIsSafe: npm's error quotes what the registry says (a
// version's name, a package's message), so a lock failure's progress line
// carries no terminal escape or workflow command as written.
func TestLockLineIsSafe(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    install.Locked
		want string
	}{
		{"locked", install.Locked{Dir: "npm/a@1.0.0", Lock: &install.Lock{}}, "[1] npm/a@1.0.0 locked"},
		{"legacy peers", install.Locked{Dir: "npm/a@1.0.0", Lock: &install.Lock{LegacyPeers: true}}, "[1] npm/a@1.0.0 locked (legacy-peer-deps: npm refused the tree with its peers)"},
		{"hostile error", install.Locked{Dir: "npm/a@1.0.0", Err: errors.New("ETARGET \x1b]52;c;SGVsbG8=\x07\n::error::owned")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lockLine(1, tc.r)
			if tc.want != "" && got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if strings.ContainsFunc(got, safetext.Unsafe) || strings.Contains(got, "\n::") {
				t.Errorf("unsafe line %q", got)
			}
		})
	}
}
