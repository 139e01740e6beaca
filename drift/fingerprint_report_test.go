package drift

import (
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// TestFingerprintTools: the report holds the set's fingerprint, each
// tool's by name (the first of a repeated name) and the names sorted once.
func TestFingerprintTools(t *testing.T) {
	b, a, a2 := mcp.Tool{Name: "b", Description: "B"}, mcp.Tool{Name: "a", Description: "A"}, mcp.Tool{Name: "a", Description: "other"}
	r := FingerprintTools([]mcp.Tool{b, a, a2})
	if r.Fingerprint != Fingerprint([]mcp.Tool{a, a2, b}) {
		t.Errorf("fingerprint %s", r.Fingerprint)
	}
	if len(r.Tools) != 2 || r.Tools["a"] != ToolFingerprint(a) || r.Tools["b"] != ToolFingerprint(b) || r.Tools["a"] == ToolFingerprint(a2) {
		t.Errorf("tools %v", r.Tools)
	}
	if len(r.Names) != 2 || r.Names[0] != "a" || r.Names[1] != "b" {
		t.Errorf("names %v", r.Names)
	}
}
