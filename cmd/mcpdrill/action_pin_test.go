package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// TestActionPinnedBySHA: every example that uses mcpdrill's action (the
// README, docs/, examples/) names it by a full commit SHA, never a tag or
// a branch, which can be force-pushed to other code (CVE-2026-33634).
func TestActionPinnedBySHA(t *testing.T) {
	root := testutil.ModuleRoot(t)
	uses := regexp.MustCompile(`uses:\s*mcpdrill/mcpdrill@(\S+)`)
	sha := regexp.MustCompile(`^[0-9a-f]{40}$`)
	var files []string
	for _, pattern := range []string{"README.md", "docs/*.md", "examples/*/*.yml", "examples/*/*.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range uses.FindAllStringSubmatch(string(b), -1) {
			found++
			if !sha.MatchString(m[1]) {
				t.Errorf("%s: mcpdrill/mcpdrill@%s is not a full commit SHA", strings.TrimPrefix(f, root+"/"), m[1])
			}
		}
	}
	if found < 2 {
		t.Errorf("%d uses of the action found, want the README's and the example's", found)
	}
}
