package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStructural: drift check --structural drops the description edit of
// testdata/ci and keeps the breaking changes; fingerprint --structural
// does not move for a rewording, and says it is structural in its JSON.
func TestStructural(t *testing.T) {
	base, current := filepath.Join("testdata", "ci", "base.json"), filepath.Join("testdata", "ci", "current.json")
	code, out, _ := runCLI(t, "drift", "check", "--baseline", base, "--current", current, "--json")
	if code != exitFindings || !strings.Contains(out, "CHG-DESCRIPTION-CHANGED") {
		t.Fatalf("in full: exit %d, want the description change\n%s", code, out)
	}
	code, out, _ = runCLI(t, "drift", "check", "--baseline", base, "--current", current, "--json", "--structural")
	if code != exitFindings || strings.Contains(out, "CHG-DESCRIPTION-CHANGED") || !strings.Contains(out, "CHG-PROPERTY-ADDED") || !strings.Contains(out, `"structural": true`) {
		t.Fatalf("structural: exit %d, want the breaking changes only\n%s", code, out)
	}

	dir := t.TempDir()
	write := func(name, desc string) string {
		p := filepath.Join(dir, name)
		doc := `{"tools":[{"name":"echo","description":"` + desc + `","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"` + desc + `"}}}}]}`
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.json", "Echo it."), write("b.json", "Say it back.")
	fp := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"fingerprint"}, args...)...)
		if code != exitOK {
			t.Fatalf("fingerprint %v: exit %d\n%s", args, code, errOut)
		}
		return out
	}
	if fp(a) == fp(b) {
		t.Error("a rewording does not change the full fingerprint")
	}
	if fp(a, "--structural") != fp(b, "--structural") {
		t.Error("a rewording changes the structural fingerprint")
	}
	if out := fp(a, "--structural", "--json"); !strings.Contains(out, `"structural": true`) {
		t.Errorf("--json does not say it is structural:\n%s", out)
	}
}
