package drift

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/report"
)

// captureKind marks a drift capture file.
const captureKind = "mcpdrill-drift-capture"

// Capture is a drift-state file: the served tools/list and the
// fingerprints of the canary responses. It holds no tool result value.
// Because it has a "tools" array it is also a valid manifest.
type Capture struct {
	SchemaVersion string            `json:"schema_version"`
	Kind          string            `json:"kind"`
	Server        CaptureServer     `json:"server"`
	Protocol      CaptureProtocol   `json:"protocol"`
	Fingerprint   string            `json:"fingerprint"`
	Complete      bool              `json:"complete"`
	Tools         []json.RawMessage `json:"tools"`
	Canaries      []CanaryRecord    `json:"canaries"`
	// Meta holds what varies between otherwise identical captures.
	Meta CaptureMeta `json:"meta"`

	tools []mcp.Tool
}

// CaptureServer is the server's self-description.
type CaptureServer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// CaptureProtocol is the negotiated session.
type CaptureProtocol struct {
	Revision  string `json:"revision"`
	Era       string `json:"era"`
	Transport string `json:"transport"`
}

// CaptureMeta is the capture's non-deterministic part.
type CaptureMeta struct {
	CapturedAt string `json:"captured_at,omitempty"`
	Version    string `json:"mcpdrill_version,omitempty"`
}

// CanaryRecord is one canary's fingerprint. ArgsHash (sha256 of the
// canonical arguments) tells whether two captures made the same call.
type CanaryRecord struct {
	Name     string      `json:"name"`
	Tool     string      `json:"tool"`
	ArgsHash string      `json:"args_hash"`
	Print    CanaryPrint `json:"print"`
}

// ToolSet returns the captured tools, decoded.
func (c *Capture) ToolSet() []mcp.Tool { return c.tools }

// CaptureOptions tunes a capture.
type CaptureOptions struct {
	// Now stamps meta.captured_at; nil leaves it empty.
	Now func() time.Time
	// Version goes into meta.mcpdrill_version.
	Version string
}

// RunCapture connects to the spec's server, lists its tools and runs each
// canary once. A canary that times out is recorded as such; a canary the
// transport cannot complete otherwise fails the capture.
func RunCapture(ctx context.Context, spec Spec, cfg mcp.Config, opt CaptureOptions) (*Capture, *Observation, error) {
	c, err := mcp.Connect(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	obs, err := observeClient(ctx, c, cfg.Protocol)
	if err != nil {
		return nil, nil, err
	}
	capt := newCapture(obs, opt)
	for _, can := range spec.Canaries {
		rec := CanaryRecord{Name: can.Name, Tool: can.Tool, ArgsHash: "sha256:" + hashBytes(canonical(can.Args))}
		msg, err := c.Call(ctx, "tools/call", map[string]any{"name": can.Tool, "arguments": can.Args})
		switch {
		case errors.Is(err, mcp.ErrTimeout):
			rec.Print = printTimeout()
		case err != nil:
			return nil, nil, fmt.Errorf("canary %s: %w", can.Name, err)
		default:
			rec.Print = printResponse(msg)
		}
		capt.Canaries = append(capt.Canaries, rec)
	}
	return capt, obs, nil
}

// newCapture builds a capture (without canaries) from an observation.
func newCapture(obs *Observation, opt CaptureOptions) *Capture {
	c := &Capture{
		SchemaVersion: SchemaVersion, Kind: captureKind,
		Server:      CaptureServer{Name: obs.Session.Server.Name, Version: obs.Session.Server.Version},
		Protocol:    CaptureProtocol{Revision: obs.Session.Revision, Era: string(obs.Session.Era), Transport: string(obs.Session.Transport)},
		Fingerprint: Fingerprint(obs.Tools),
		Complete:    !obs.Capped && len(obs.Unreadable) == 0,
		Canaries:    []CanaryRecord{},
		Meta:        CaptureMeta{Version: opt.Version},
		tools:       obs.Tools,
	}
	for _, t := range obs.Tools {
		c.Tools = append(c.Tools, t.Raw)
	}
	if c.Tools == nil {
		c.Tools = []json.RawMessage{}
	}
	if opt.Now != nil {
		c.Meta.CapturedAt = opt.Now().UTC().Format(time.RFC3339)
	}
	return c
}

// ErrNotCapture reports a file that is not a drift capture.
var ErrNotCapture = errors.New("not a drift capture")

// LoadState reads a baseline or current file: a capture, or any manifest
// (which then has no canaries and counts as complete unless it carries a
// nextCursor).
func LoadState(b []byte) (*Capture, error) {
	var probe struct {
		Kind          string `json:"kind"`
		SchemaVersion string `json:"schema_version"`
	}
	_ = json.Unmarshal(b, &probe)
	if probe.Kind != captureKind {
		m, err := ParseManifest(b)
		if err != nil {
			return nil, err
		}
		c := &Capture{SchemaVersion: SchemaVersion, Kind: "manifest", Complete: !m.Truncated(), tools: m.Tools,
			Fingerprint: Fingerprint(m.Tools), Canaries: []CanaryRecord{}}
		for _, t := range m.Tools {
			c.Tools = append(c.Tools, t.Raw)
		}
		return c, nil
	}
	if probe.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%w: schema_version %q is not supported (want %q)", ErrNotCapture, probe.SchemaVersion, SchemaVersion)
	}
	var c Capture
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotCapture, err)
	}
	seen := map[string]bool{}
	for i, raw := range c.Tools {
		t, err := ParseTool(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: tools[%d]: %w", ErrNotCapture, i, err)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("%w: tool %q listed twice", ErrNotCapture, t.Name)
		}
		seen[t.Name] = true
		c.tools = append(c.tools, t)
	}
	return &c, nil
}

// Check compares a current state with a baseline: the schema comparison of
// Compare plus, for every canary, compareCanary. A canary whose arguments
// changed between the two files is reported as not compared.
func Check(base, cur *Capture) []report.Finding {
	fs := Compare(Side{Tools: base.tools, Incomplete: !base.Complete}, Side{Tools: cur.tools, Incomplete: !cur.Complete})
	curBy := map[string]CanaryRecord{}
	for _, r := range cur.Canaries {
		curBy[r.Name] = r
	}
	baseBy := map[string]bool{}
	for _, b := range base.Canaries {
		baseBy[b.Name] = true
		c, ok := curBy[b.Name]
		switch {
		case !ok:
			fs = append(fs, report.Finding{Rule: ruleCanaryMissing, Severity: report.SeverityWarn, Tool: b.Tool,
				Message: fmt.Sprintf("canary %s is in the baseline but was not run in the current capture", b.Name)})
		case c.ArgsHash != b.ArgsHash || c.Tool != b.Tool:
			fs = append(fs, report.Finding{Rule: ruleCanaryMissing, Severity: report.SeverityWarn, Tool: b.Tool,
				Message: fmt.Sprintf("canary %s was called with different arguments or another tool; behaviour not compared", b.Name)})
		default:
			fs = append(fs, compareCanary(b.Name, b.Tool, b.Print, c.Print)...)
		}
	}
	for _, c := range cur.Canaries {
		if !baseBy[c.Name] {
			fs = append(fs, report.Finding{Rule: ruleCanaryMissing, Severity: report.SeverityWarn, Tool: c.Tool,
				Message: fmt.Sprintf("canary %s has no baseline; behaviour not compared", c.Name)})
		}
	}
	report.Sort(fs)
	return fs
}
