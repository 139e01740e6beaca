package drift

import (
	"slices"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// FingerprintReport is what `fingerprint` reports of a tool set: its
// fingerprint and each tool's.
type FingerprintReport struct {
	// Fingerprint is the set's (Fingerprint).
	Fingerprint string `json:"fingerprint"`
	// Tools maps each tool's name to its ToolFingerprint; of two tools of
	// one name, the first listed.
	Tools map[string]string `json:"tools"`
	// Structural is set when the tools were fingerprinted without their
	// descriptions and titles (Structural).
	Structural bool `json:"structural,omitempty"`
	// Names are the tools' names, sorted (ToolNames).
	Names []string `json:"-"`
}

// FingerprintTools is the fingerprint report of tools.
func FingerprintTools(tools []mcp.Tool) *FingerprintReport {
	r := &FingerprintReport{Fingerprint: Fingerprint(tools), Tools: map[string]string{}, Names: slices.Compact(ToolNames(tools))}
	for _, t := range tools {
		if _, seen := r.Tools[t.Name]; !seen {
			r.Tools[t.Name] = ToolFingerprint(t)
		}
	}
	return r
}
