package drift

import (
	"context"
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

// FingerprintServer lists the live server's tools and reports their
// fingerprints; the observation says whether the listing was capped and
// which entries could not be read (they are not in the report). Errors
// are Observe's.
func FingerprintServer(ctx context.Context, cfg mcp.Config) (*FingerprintReport, *Observation, error) {
	obs, err := Observe(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return FingerprintTools(obs.Tools), obs, nil
}
