// Package drift compares what an MCP server declared (a manifest or a
// captured baseline) with what it serves now. It owns the canonical
// fingerprint of a tool set, the direction-aware JSON Schema change
// classifier and its stable rule catalogue (CHG-* change kinds graded by
// BRK-* rules), manifests and captures, and behavioural canaries.
//
// Inputs are decoded tool objects; outputs are Changes and report.Findings.
// The package never prints, and never puts a value returned by a tool into a
// message: schema values (enum members, bounds, defaults) may appear, tool
// results never do.
package drift
