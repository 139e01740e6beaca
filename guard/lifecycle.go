// Package guard pins each MCP server's tool set: it keeps an approved
// baseline per server, a lifecycle status (verified, changed, pending,
// quarantined), and an append-only audit log, in a store directory that
// several proxies may share.
//
// The lifecycle transitions are pure functions of the current record, the
// observation or operator action, and the time: Observe, Approve, Quarantine
// and Release. The Store applies them under a file lock with atomic writes.
// The proxy (package proxy) enforces the result: only a verified server's
// tools are served.
package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// Status is a server's lifecycle status.
type Status string

// Statuses. A server without a record has no baseline (StatusNone).
const (
	// StatusNone: no baseline recorded yet (never stored).
	StatusNone Status = ""
	// StatusVerified: the live tool set matches the approved baseline. Served.
	StatusVerified Status = "verified"
	// StatusChanged: drift detected, the live set differs from the baseline.
	// Fails closed.
	StatusChanged Status = "changed"
	// StatusPending: no baseline under the strict posture, awaiting approval.
	// Fails closed.
	StatusPending Status = "pending"
	// StatusQuarantined: an operator put the server on hold. Fails closed.
	StatusQuarantined Status = "quarantined"
)

// String returns the status name ("none" for StatusNone).
func (s Status) String() string {
	if s == StatusNone {
		return "none"
	}
	return string(s)
}

// Valid reports whether s may appear in a stored record.
func (s Status) Valid() bool {
	switch s {
	case StatusVerified, StatusChanged, StatusPending, StatusQuarantined:
		return true
	}
	return false
}

// Posture decides what happens on first contact with a server that has no
// baseline.
type Posture string

// Postures.
const (
	// PostureDiscovery trusts on first use: the first live set becomes the
	// baseline and is served.
	PostureDiscovery Posture = "discovery"
	// PostureStrict holds a server without baseline as pending until an
	// operator approves it.
	PostureStrict Posture = "strict"
)

// ParsePosture accepts "discovery" or "strict".
func ParsePosture(s string) (Posture, error) {
	switch Posture(s) {
	case PostureDiscovery, PostureStrict:
		return Posture(s), nil
	}
	return "", fmt.Errorf("guard: unknown posture %q (want discovery or strict)", s)
}

// Action names an audit event.
type Action string

// Audit actions. The first four are taken by a proxy, the last three by an
// operator.
const (
	// ActionFirstUse: no baseline, discovery posture: the live set became the
	// baseline (trust on first use).
	ActionFirstUse Action = "first-use"
	// ActionHold: no baseline, strict posture: the server is pending.
	ActionHold Action = "hold"
	// ActionDrift: a verified server's live set differs from its baseline.
	ActionDrift Action = "drift"
	// ActionReseen: a held server's live set moved again (the last-seen set
	// was replaced; the status did not change).
	ActionReseen Action = "reseen"
	// ActionApprove: an operator re-baselined the server to its last-seen set.
	ActionApprove Action = "approve"
	// ActionQuarantine: an operator put the server on hold.
	ActionQuarantine Action = "quarantine"
	// ActionRelease: an operator lifted a quarantine.
	ActionRelease Action = "release"
	// ActionRollback: the store found the event before it in the log
	// without its record (it stopped between the two writes); the
	// transition did not happen.
	ActionRollback Action = "rollback"
)

// ToolSet is a tool set as the guard keeps it: its fingerprint and the tool
// objects, sorted by name, as the server sent them (compacted).
type ToolSet struct {
	// Fingerprint is drift.Fingerprint of the tools.
	Fingerprint string `json:"fingerprint"`
	// Tools are the tool objects, sorted by name.
	Tools []json.RawMessage `json:"tools"`
}

// NewToolSet builds a ToolSet from parsed tools.
func NewToolSet(tools []mcp.Tool) ToolSet {
	ts := slices.Clone(tools)
	slices.SortStableFunc(ts, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	out := ToolSet{Fingerprint: drift.Fingerprint(tools), Tools: make([]json.RawMessage, 0, len(ts))}
	for _, t := range ts {
		var b bytes.Buffer
		if len(t.Raw) == 0 || json.Compact(&b, t.Raw) != nil {
			b.Reset()
			b.Write(drift.ListResult([]mcp.Tool{t})) // {"tools":[tool]}
			m, err := drift.ParseManifest(b.Bytes())
			if err == nil && len(m.Tools) == 1 {
				b.Reset()
				b.Write(m.Tools[0].Raw)
			}
		}
		out.Tools = append(out.Tools, json.RawMessage(b.Bytes()))
	}
	return out
}

// Parse decodes the tool objects back.
func (s ToolSet) Parse() ([]mcp.Tool, error) {
	out := make([]mcp.Tool, 0, len(s.Tools))
	for i, raw := range s.Tools {
		t, err := drift.ParseTool(raw)
		if err != nil {
			return nil, fmt.Errorf("tools[%d]: %w", i, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// Names returns the sorted tool names (nil when a tool does not parse).
func (s ToolSet) Names() []string {
	ts, err := s.Parse()
	if err != nil {
		return nil
	}
	return drift.ToolNames(ts)
}

// Has reports whether the set holds a tool named name. It is asked on every
// guarded tools/call, so it reads only the names it compares, by binary
// search over the name-sorted tools (a stored set was fully validated when
// its record was decoded).
func (s ToolSet) Has(name string) bool {
	i, ok := slices.BinarySearchFunc(s.Tools, name, func(raw json.RawMessage, name string) int {
		var t struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &t)
		return strings.Compare(t.Name, name)
	})
	return ok && i < len(s.Tools)
}

// RecordFormat is the version of the record file format.
const RecordFormat = 1

// Record is one server's state in the store (one JSON file per server).
type Record struct {
	Format int    `json:"format"`
	Server string `json:"server"`
	Status Status `json:"status"`
	// Baseline is the approved tool set; nil when none was ever approved
	// (pending, or quarantined before first contact).
	Baseline *ToolSet `json:"baseline,omitempty"`
	// LastSeen is the last live tool set observed; nil before first contact.
	LastSeen *ToolSet `json:"last_seen,omitempty"`
	// DriftAt is when drift from the baseline was first detected; cleared by
	// approve.
	DriftAt *time.Time `json:"drift_at,omitempty"`
	// ApprovedAt and ApprovedBy say who set the baseline and when
	// (ApprovedBy "first-use" for trust on first use).
	ApprovedAt *time.Time `json:"approved_at,omitempty"`
	ApprovedBy string     `json:"approved_by,omitempty"`
	// UpdatedAt is the time of the last transition.
	UpdatedAt time.Time `json:"updated_at"`
	// AuditLine is the SHA-256, in hex, of the audit-log line of the last
	// transition that wrote one. A store that stopped between the line and
	// the record is found by this, not by comparing clocks (records
	// written before it existed are judged by UpdatedAt).
	AuditLine string `json:"audit_line,omitempty"`
}

// Serves reports whether the server's tools may be served: only a verified
// server with a baseline.
func (r *Record) Serves() bool {
	return r != nil && r.Status == StatusVerified && r.Baseline != nil
}

// StatusOf returns r's status, StatusNone for a nil record.
func StatusOf(r *Record) Status {
	if r == nil {
		return StatusNone
	}
	return r.Status
}

// Validate checks a decoded record's invariants.
func (r *Record) Validate() error {
	if r.Format != RecordFormat {
		return fmt.Errorf("unsupported record format %d (want %d)", r.Format, RecordFormat)
	}
	if err := ValidServerName(r.Server); err != nil {
		return err
	}
	if !r.Status.Valid() {
		return fmt.Errorf("invalid status %q", string(r.Status))
	}
	if r.AuditLine != "" && !auditDigest.MatchString(r.AuditLine) {
		return fmt.Errorf("invalid audit_line %q (want 64 lowercase hex digits)", r.AuditLine)
	}
	if r.Status == StatusVerified || r.Status == StatusChanged {
		if r.Baseline == nil {
			return fmt.Errorf("status %s without a baseline", r.Status)
		}
	}
	for _, s := range []*ToolSet{r.Baseline, r.LastSeen} {
		if s == nil {
			continue
		}
		ts, err := s.Parse()
		if err != nil {
			return err
		}
		if fp := drift.Fingerprint(ts); fp != s.Fingerprint {
			return fmt.Errorf("stored fingerprint %s does not match its tools (%s)", s.Fingerprint, fp)
		}
	}
	return nil
}

// Event is one audit-log line.
type Event struct {
	Time   time.Time `json:"time"`
	Actor  string    `json:"actor"`
	Server string    `json:"server"`
	Action Action    `json:"action"`
	// Rule is the action's MCP-GUARD-* rule id.
	Rule string `json:"rule"`
	// From and To are the statuses before and after ("none": no record).
	From string `json:"from"`
	To   string `json:"to"`
	// OldFingerprint and NewFingerprint are the fingerprints the action
	// moved between: the baseline and the live set for a drift, the old and
	// new baseline for an approve, the previous and new last-seen set for a
	// reseen; empty when there was none.
	OldFingerprint string `json:"old_fingerprint,omitempty"`
	NewFingerprint string `json:"new_fingerprint,omitempty"`
	Posture        string `json:"posture,omitempty"`
	Note           string `json:"note,omitempty"`
}

func fpOf(s *ToolSet) string {
	if s == nil {
		return ""
	}
	return s.Fingerprint
}

func clone(r *Record, server string, now time.Time) Record {
	if r == nil {
		return Record{Format: RecordFormat, Server: server, UpdatedAt: now}
	}
	c := *r
	return c
}

func ptrTime(t time.Time) *time.Time { return &t }

func event(r *Record, next Record, a Action, actor string, now time.Time, oldFP, newFP string) *Event {
	return &Event{
		Time: now, Actor: actor, Server: next.Server, Action: a, Rule: RuleOf(a),
		From: StatusOf(r).String(), To: next.Status.String(),
		OldFingerprint: oldFP, NewFingerprint: newFP,
	}
}

// Observe is the transition for one complete live tool set seen by a proxy.
// r is the current record (nil: no baseline yet). It returns the next record
// and the audit event, or a nil event when nothing needs writing (the record
// is then unchanged).
//
//	none        + discovery        → verified (baseline = live)  first-use
//	none        + strict           → pending  (last seen = live) hold
//	verified    + live = baseline  → verified                    —
//	verified    + live ≠ baseline  → changed  (drift_at = now)   drift
//	changed|pending|quarantined    → unchanged status, last seen = live; reseen when it moved
//
// A changed server stays changed even if the live set reverts to the
// baseline: only an operator clears drift (a server that flips back and
// forth is itself suspect). The posture only matters without a record.
func Observe(r *Record, server string, live ToolSet, p Posture, actor string, now time.Time) (Record, *Event) {
	next := clone(r, server, now)
	liveCopy := live
	switch StatusOf(r) {
	case StatusNone:
		next.LastSeen = &liveCopy
		next.UpdatedAt = now
		if p == PostureStrict {
			next.Status = StatusPending
			ev := event(r, next, ActionHold, actor, now, "", live.Fingerprint)
			ev.Posture = string(p)
			return next, ev
		}
		base := live
		next.Status, next.Baseline = StatusVerified, &base
		next.ApprovedAt, next.ApprovedBy = ptrTime(now), string(ActionFirstUse)
		ev := event(r, next, ActionFirstUse, actor, now, "", live.Fingerprint)
		ev.Posture = string(PostureDiscovery)
		return next, ev
	case StatusVerified:
		if live.Fingerprint == fpOf(r.Baseline) {
			if fpOf(r.LastSeen) == live.Fingerprint {
				return next, nil
			}
			next.LastSeen = &liveCopy // a record approved before any sighting
			next.UpdatedAt = now
			return next, nil
		}
		next.Status, next.LastSeen = StatusChanged, &liveCopy
		next.DriftAt, next.UpdatedAt = ptrTime(now), now
		return next, event(r, next, ActionDrift, actor, now, fpOf(r.Baseline), live.Fingerprint)
	default: // changed, pending, quarantined: held
		if fpOf(r.LastSeen) == live.Fingerprint {
			return next, nil
		}
		next.LastSeen, next.UpdatedAt = &liveCopy, now
		if next.Baseline != nil && live.Fingerprint != next.Baseline.Fingerprint && next.DriftAt == nil {
			next.DriftAt = ptrTime(now)
		}
		return next, event(r, next, ActionReseen, actor, now, fpOf(r.LastSeen), live.Fingerprint)
	}
}

// Operator errors.
var (
	// ErrUnknownServer: the store has no record of the server.
	ErrUnknownServer = errors.New("guard: no record of this server")
	// ErrNothingToApprove: the server has never been seen, so there is no
	// live set to approve.
	ErrNothingToApprove = errors.New("guard: no tool set seen yet for this server")
	// ErrQuarantined: approve refuses a quarantined server (release it first).
	ErrQuarantined = errors.New("guard: server is quarantined")
	// ErrNotQuarantined: release needs a quarantined server.
	ErrNotQuarantined = errors.New("guard: server is not quarantined")
	// ErrFingerprintMismatch: the set to approve is not the one reviewed.
	ErrFingerprintMismatch = errors.New("guard: the last-seen tool set is not the one given to approve")
)

// Approve re-baselines the server to its last-seen tool set and marks it
// verified. expect, when not empty, must equal the last-seen fingerprint:
// it makes sure the operator approves the set they reviewed, not one a
// proxy saw since. A quarantined server must be released first.
func Approve(r *Record, expect, actor string, now time.Time) (Record, *Event, error) {
	if r == nil {
		return Record{}, nil, ErrUnknownServer
	}
	if r.Status == StatusQuarantined {
		return Record{}, nil, ErrQuarantined
	}
	if r.LastSeen == nil {
		return Record{}, nil, ErrNothingToApprove
	}
	if expect != "" && expect != r.LastSeen.Fingerprint {
		return Record{}, nil, fmt.Errorf("%w: last seen %s, given %s", ErrFingerprintMismatch, r.LastSeen.Fingerprint, expect)
	}
	next := clone(r, r.Server, now)
	base := *r.LastSeen
	next.Status, next.Baseline, next.DriftAt = StatusVerified, &base, nil
	next.ApprovedAt, next.ApprovedBy, next.UpdatedAt = ptrTime(now), actor, now
	return next, event(r, next, ActionApprove, actor, now, fpOf(r.Baseline), base.Fingerprint), nil
}

// Quarantine puts a server on hold, from any status; a server never seen
// gets a record with no baseline, held before first contact.
func Quarantine(r *Record, server, note, actor string, now time.Time) (Record, *Event) {
	next := clone(r, server, now)
	next.Status, next.UpdatedAt = StatusQuarantined, now
	ev := event(r, next, ActionQuarantine, actor, now, fpOf(next.Baseline), fpOf(next.LastSeen))
	ev.Note = note
	return next, ev
}

// Release lifts a quarantine. The status becomes what the record shows:
// verified when the last-seen set (if any) matches the baseline, changed
// when it differs, pending when there is no baseline (release never
// trusts on first use).
func Release(r *Record, actor string, now time.Time) (Record, *Event, error) {
	if r == nil {
		return Record{}, nil, ErrUnknownServer
	}
	if r.Status != StatusQuarantined {
		return Record{}, nil, fmt.Errorf("%w (status %s)", ErrNotQuarantined, r.Status)
	}
	next := clone(r, r.Server, now)
	next.UpdatedAt = now
	switch {
	case r.Baseline == nil:
		next.Status = StatusPending
	case r.LastSeen == nil || r.LastSeen.Fingerprint == r.Baseline.Fingerprint:
		next.Status = StatusVerified
	default:
		next.Status = StatusChanged
		if next.DriftAt == nil {
			next.DriftAt = ptrTime(now)
		}
	}
	return next, event(r, next, ActionRelease, actor, now, fpOf(r.Baseline), fpOf(r.LastSeen)), nil
}

// Command is an operator command the guard suggests: a verb ("status",
// "diff", "approve", "quarantine", "release") applied to a server. An
// approve carries the fingerprint of the tool set the operator is asked
// to review, so that the command approves that set and no other: a set
// that changed since fails the approval instead of being taken unseen.
type Command struct {
	Verb   string
	Server string
	// Fingerprint is the set an approve is for ("" for other verbs).
	Fingerprint string
}

// Hint words an operator command as a line the user can paste. The caller
// supplies it: the CLI owns its command names and flags (the guard store's
// directory among them).
type Hint func(Command) string

// ApproveCommand is the approve command a refusal suggests for r: the
// approval of its last-seen set, by fingerprint. There is none (ok false)
// unless r is changed or pending with a set seen: a verified server has
// nothing to approve, a quarantined one is released first.
func ApproveCommand(r *Record) (c Command, ok bool) {
	if r == nil || r.LastSeen == nil || (r.Status != StatusChanged && r.Status != StatusPending) {
		return Command{}, false
	}
	return Command{Verb: "approve", Server: r.Server, Fingerprint: r.LastSeen.Fingerprint}, true
}

// Explain is the refusal text for a server whose tools are not served: it
// names the status and, worded by hint, the commands to review it.
func Explain(hint Hint, server string, r *Record) string {
	cmd := func(verb string) string { return "`" + hint(Command{Verb: verb, Server: server}) + "`" }
	approve, canApprove := ApproveCommand(r)
	switch StatusOf(r) {
	case StatusChanged:
		then := cmd("quarantine")
		if canApprove {
			then = "`" + hint(approve) + "` (or " + then + ")"
		}
		return fmt.Sprintf("mcpdrill guard: server %q is changed: its tool set drifted from the approved baseline, so its tools are withheld; review with %s, then %s", server, cmd("diff"), then)
	case StatusPending:
		if !canApprove {
			return fmt.Sprintf("mcpdrill guard: server %q is pending: it has no approved baseline and no tool set seen yet, so its tools are withheld until a proxy lists them; check with %s", server, cmd("status"))
		}
		return fmt.Sprintf("mcpdrill guard: server %q is pending: it has no approved baseline (strict posture), so its tools are withheld; review with %s, then %s", server, cmd("diff"), "`"+hint(approve)+"`")
	case StatusQuarantined:
		return fmt.Sprintf("mcpdrill guard: server %q is quarantined by an operator, so its tools are withheld; review with %s and lift it with %s", server, cmd("status"), cmd("release"))
	case StatusVerified:
		return fmt.Sprintf("mcpdrill guard: server %q is verified", server)
	}
	return fmt.Sprintf("mcpdrill guard: server %q has no baseline yet, so its tools are withheld until its tool set is listed; check with %s", server, cmd("status"))
}
