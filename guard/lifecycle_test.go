package guard

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

const (
	toolsA = `{"tools":[
 {"name":"echo","description":"Echo the text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
 {"name":"weather","description":"Current weather.","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"units":{"enum":["metric","imperial"],"type":"string"}}}}]}`
	// toolsAReordered is toolsA with the tools and every object's keys in another order.
	toolsAReordered = `{"tools":[
 {"inputSchema":{"properties":{"units":{"type":"string","enum":["metric","imperial"]},"city":{"type":"string"}},"type":"object"},"description":"Current weather.","name":"weather"},
 {"description":"Echo the text.","name":"echo","inputSchema":{"required":["text"],"type":"object","properties":{"text":{"type":"string"}}}}]}`
	// toolsB changes one character of weather's description.
	toolsB = `{"tools":[
 {"name":"echo","description":"Echo the text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
 {"name":"weather","description":"Current weather!","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"units":{"enum":["metric","imperial"],"type":"string"}}}}]}`
)

func mustSet(t testing.TB, doc string) ToolSet {
	t.Helper()
	m, err := drift.ParseManifest([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return NewToolSet(m.Tools)
}

var (
	t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

func rec(status Status, base, seen *ToolSet) *Record {
	r := &Record{Format: RecordFormat, Server: "srv", Status: status, Baseline: base, LastSeen: seen, UpdatedAt: t0}
	if status == StatusChanged {
		r.DriftAt = &t0
	}
	return r
}

func TestFingerprintInvariance(t *testing.T) {
	a, ar, b := mustSet(t, toolsA), mustSet(t, toolsAReordered), mustSet(t, toolsB)
	if a.Fingerprint != ar.Fingerprint {
		t.Errorf("reordered tools/keys changed the fingerprint: %s vs %s", a.Fingerprint, ar.Fingerprint)
	}
	if a.Fingerprint == b.Fingerprint {
		t.Errorf("a one-character description change kept the fingerprint %s", a.Fingerprint)
	}
	// Observed through the lifecycle: reordering is no drift, one character is.
	r, _ := Observe(nil, "srv", a, PostureDiscovery, "proxy", t0)
	if next, ev := Observe(&r, "srv", ar, PostureDiscovery, "proxy", t1); ev != nil || next.Status != StatusVerified {
		t.Errorf("reordered set: status %s, event %+v", next.Status, ev)
	}
	if next, ev := Observe(&r, "srv", b, PostureDiscovery, "proxy", t1); ev == nil || ev.Action != ActionDrift || next.Status != StatusChanged {
		t.Errorf("one-character change: status %s, event %+v", next.Status, ev)
	}
}

func TestObserveTransitions(t *testing.T) {
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	c := mustSet(t, `[{"name":"other","inputSchema":{"type":"object"}}]`)
	tests := []struct {
		name      string
		cur       *Record
		live      ToolSet
		posture   Posture
		want      Status
		action    Action // "" = no event
		oldFP     string
		newFP     string
		baseline  string // fingerprint of the baseline after
		driftSet  bool
		lastSeen  string
		approvedB string
	}{
		{name: "none+discovery→verified (first use)", live: a, posture: PostureDiscovery, want: StatusVerified,
			action: ActionFirstUse, newFP: a.Fingerprint, baseline: a.Fingerprint, lastSeen: a.Fingerprint, approvedB: "first-use"},
		{name: "none+strict→pending", live: a, posture: PostureStrict, want: StatusPending,
			action: ActionHold, newFP: a.Fingerprint, lastSeen: a.Fingerprint},
		{name: "verified+same→verified", cur: rec(StatusVerified, &a, &a), live: a, posture: PostureStrict, want: StatusVerified,
			baseline: a.Fingerprint, lastSeen: a.Fingerprint},
		{name: "verified+drift→changed", cur: rec(StatusVerified, &a, &a), live: b, posture: PostureDiscovery, want: StatusChanged,
			action: ActionDrift, oldFP: a.Fingerprint, newFP: b.Fingerprint, baseline: a.Fingerprint, driftSet: true, lastSeen: b.Fingerprint},
		{name: "changed+same drift→changed, no event", cur: rec(StatusChanged, &a, &b), live: b, posture: PostureDiscovery, want: StatusChanged,
			baseline: a.Fingerprint, driftSet: true, lastSeen: b.Fingerprint},
		{name: "changed+new drift→changed (reseen)", cur: rec(StatusChanged, &a, &b), live: c, posture: PostureDiscovery, want: StatusChanged,
			action: ActionReseen, oldFP: b.Fingerprint, newFP: c.Fingerprint, baseline: a.Fingerprint, driftSet: true, lastSeen: c.Fingerprint},
		{name: "changed+revert→still changed", cur: rec(StatusChanged, &a, &b), live: a, posture: PostureDiscovery, want: StatusChanged,
			action: ActionReseen, oldFP: b.Fingerprint, newFP: a.Fingerprint, baseline: a.Fingerprint, driftSet: true, lastSeen: a.Fingerprint},
		{name: "pending+discovery stays pending", cur: rec(StatusPending, nil, &a), live: a, posture: PostureDiscovery, want: StatusPending,
			lastSeen: a.Fingerprint},
		{name: "pending+moved→pending (reseen)", cur: rec(StatusPending, nil, &a), live: b, posture: PostureStrict, want: StatusPending,
			action: ActionReseen, oldFP: a.Fingerprint, newFP: b.Fingerprint, lastSeen: b.Fingerprint},
		{name: "quarantined+drift stays quarantined, drift recorded", cur: rec(StatusQuarantined, &a, &a), live: b, posture: PostureDiscovery,
			want: StatusQuarantined, action: ActionReseen, oldFP: a.Fingerprint, newFP: b.Fingerprint, baseline: a.Fingerprint, driftSet: true, lastSeen: b.Fingerprint},
		{name: "quarantined before contact, first sighting", cur: rec(StatusQuarantined, nil, nil), live: a, posture: PostureDiscovery,
			want: StatusQuarantined, action: ActionReseen, newFP: a.Fingerprint, lastSeen: a.Fingerprint},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next, ev := Observe(tc.cur, "srv", tc.live, tc.posture, "proxy", t1)
			if next.Status != tc.want {
				t.Fatalf("status %s, want %s", next.Status, tc.want)
			}
			if err := next.Validate(); err != nil {
				t.Fatalf("invalid record: %v", err)
			}
			if tc.action == "" {
				if ev != nil {
					t.Fatalf("unexpected event %+v", ev)
				}
			} else {
				if ev == nil || ev.Action != tc.action {
					t.Fatalf("event %+v, want action %s", ev, tc.action)
				}
				if ev.OldFingerprint != tc.oldFP || ev.NewFingerprint != tc.newFP {
					t.Errorf("fingerprints %q→%q, want %q→%q", ev.OldFingerprint, ev.NewFingerprint, tc.oldFP, tc.newFP)
				}
				if ev.From != StatusOf(tc.cur).String() || ev.To != tc.want.String() || ev.Actor != "proxy" || !ev.Time.Equal(t1) || ev.Server != "srv" {
					t.Errorf("event %+v", ev)
				}
			}
			if fpOf(next.Baseline) != tc.baseline {
				t.Errorf("baseline %q, want %q", fpOf(next.Baseline), tc.baseline)
			}
			if fpOf(next.LastSeen) != tc.lastSeen {
				t.Errorf("last seen %q, want %q", fpOf(next.LastSeen), tc.lastSeen)
			}
			if (next.DriftAt != nil) != tc.driftSet {
				t.Errorf("drift_at %v, want set=%v", next.DriftAt, tc.driftSet)
			}
			if tc.want == StatusChanged && tc.cur != nil && tc.cur.Status == StatusVerified && !next.DriftAt.Equal(t1) {
				t.Errorf("drift_at %v, want %v", next.DriftAt, t1)
			}
			if next.ApprovedBy != tc.approvedB {
				t.Errorf("approved_by %q, want %q", next.ApprovedBy, tc.approvedB)
			}
			if next.Serves() != (tc.want == StatusVerified) {
				t.Errorf("Serves() = %v for %s", next.Serves(), tc.want)
			}
		})
	}
}

func TestOperatorTransitions(t *testing.T) {
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	type op func(r *Record) (Record, *Event, error)
	approve := func(expect string) op {
		return func(r *Record) (Record, *Event, error) { return Approve(r, expect, "alice", t1) }
	}
	quarantine := func(r *Record) (Record, *Event, error) {
		n, ev := Quarantine(r, "srv", "hostile", "alice", t1)
		return n, ev, nil
	}
	release := func(r *Record) (Record, *Event, error) { return Release(r, "alice", t1) }
	tests := []struct {
		name     string
		cur      *Record
		op       op
		err      error
		want     Status
		action   Action
		oldFP    string
		newFP    string
		baseline string
		driftSet bool
	}{
		{name: "approve changed→verified (re-baseline)", cur: rec(StatusChanged, &a, &b), op: approve(""),
			want: StatusVerified, action: ActionApprove, oldFP: a.Fingerprint, newFP: b.Fingerprint, baseline: b.Fingerprint},
		{name: "approve pending→verified", cur: rec(StatusPending, nil, &a), op: approve(a.Fingerprint),
			want: StatusVerified, action: ActionApprove, newFP: a.Fingerprint, baseline: a.Fingerprint},
		{name: "approve verified→verified (idempotent, still audited)", cur: rec(StatusVerified, &a, &a), op: approve(""),
			want: StatusVerified, action: ActionApprove, oldFP: a.Fingerprint, newFP: a.Fingerprint, baseline: a.Fingerprint},
		{name: "approve with a stale fingerprint is refused", cur: rec(StatusChanged, &a, &b), op: approve(a.Fingerprint), err: ErrFingerprintMismatch},
		{name: "approve quarantined is refused", cur: rec(StatusQuarantined, &a, &b), op: approve(""), err: ErrQuarantined},
		{name: "approve unknown is refused", op: approve(""), err: ErrUnknownServer},
		{name: "approve never seen is refused", cur: rec(StatusQuarantined, nil, nil), op: func(r *Record) (Record, *Event, error) {
			r.Status = StatusPending
			return Approve(r, "", "alice", t1)
		}, err: ErrNothingToApprove},
		{name: "quarantine verified→quarantined", cur: rec(StatusVerified, &a, &a), op: quarantine,
			want: StatusQuarantined, action: ActionQuarantine, oldFP: a.Fingerprint, newFP: a.Fingerprint, baseline: a.Fingerprint},
		{name: "quarantine changed→quarantined", cur: rec(StatusChanged, &a, &b), op: quarantine,
			want: StatusQuarantined, action: ActionQuarantine, oldFP: a.Fingerprint, newFP: b.Fingerprint, baseline: a.Fingerprint, driftSet: true},
		{name: "quarantine pending→quarantined", cur: rec(StatusPending, nil, &a), op: quarantine,
			want: StatusQuarantined, action: ActionQuarantine, newFP: a.Fingerprint},
		{name: "quarantine unknown→quarantined (before contact)", op: quarantine, want: StatusQuarantined, action: ActionQuarantine},
		{name: "release to verified", cur: rec(StatusQuarantined, &a, &a), op: release,
			want: StatusVerified, action: ActionRelease, oldFP: a.Fingerprint, newFP: a.Fingerprint, baseline: a.Fingerprint},
		{name: "release to changed", cur: rec(StatusQuarantined, &a, &b), op: release,
			want: StatusChanged, action: ActionRelease, oldFP: a.Fingerprint, newFP: b.Fingerprint, baseline: a.Fingerprint, driftSet: true},
		{name: "release without baseline to pending", cur: rec(StatusQuarantined, nil, &a), op: release,
			want: StatusPending, action: ActionRelease, newFP: a.Fingerprint},
		{name: "release not quarantined is refused", cur: rec(StatusChanged, &a, &b), op: release, err: ErrNotQuarantined},
		{name: "release unknown is refused", op: release, err: ErrUnknownServer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next, ev, err := tc.op(tc.cur)
			if testutil.WantErrorIs(t, err, tc.err) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if next.Status != tc.want {
				t.Fatalf("status %s, want %s", next.Status, tc.want)
			}
			if err := next.Validate(); err != nil {
				t.Fatalf("invalid record: %v", err)
			}
			if ev == nil || ev.Action != tc.action || ev.Actor != "alice" || ev.To != tc.want.String() || ev.From != StatusOf(tc.cur).String() {
				t.Fatalf("event %+v", ev)
			}
			if ev.OldFingerprint != tc.oldFP || ev.NewFingerprint != tc.newFP {
				t.Errorf("fingerprints %q→%q, want %q→%q", ev.OldFingerprint, ev.NewFingerprint, tc.oldFP, tc.newFP)
			}
			if fpOf(next.Baseline) != tc.baseline {
				t.Errorf("baseline %q, want %q", fpOf(next.Baseline), tc.baseline)
			}
			if (next.DriftAt != nil) != tc.driftSet {
				t.Errorf("drift_at %v, want set=%v", next.DriftAt, tc.driftSet)
			}
			if tc.action == ActionApprove && (next.ApprovedBy != "alice" || !next.ApprovedAt.Equal(t1)) {
				t.Errorf("approved by %q at %v", next.ApprovedBy, next.ApprovedAt)
			}
		})
	}
}

func TestExplainNamesStatusAndCommands(t *testing.T) {
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	hint := func(c Command) string {
		return strings.Join(strings.Fields("HINT "+c.Verb+" "+c.Fingerprint+" "+c.Server), " ")
	}
	for _, tc := range []struct {
		r    *Record
		want []string
	}{
		// approve names the last-seen set by its fingerprint (F14, issue 35).
		{rec(StatusChanged, &a, &b), []string{"changed", "`HINT diff srv`", "`HINT approve " + b.Fingerprint + " srv`", "`HINT quarantine srv`"}},
		{rec(StatusPending, nil, &a), []string{"pending", "`HINT diff srv`", "`HINT approve " + a.Fingerprint + " srv`"}},
		{rec(StatusPending, nil, nil), []string{"pending", "no tool set seen yet", "`HINT status srv`"}},
		{rec(StatusQuarantined, &a, &a), []string{"quarantined", "`HINT status srv`", "`HINT release srv`"}},
		{nil, []string{"no baseline", "`HINT status srv`"}},
	} {
		msg := Explain(hint, "srv", tc.r)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("Explain(%s) = %q, lacks %q", StatusOf(tc.r), msg, w)
			}
		}
		if strings.Contains(msg, "HINT approve srv") {
			t.Errorf("Explain(%s) = %q suggests an approve without a fingerprint", StatusOf(tc.r), msg)
		}
	}
}

// TestApproveCommand: a refusal suggests approving only a set that was
// seen, by its fingerprint, and only while there is something to approve.
func TestApproveCommand(t *testing.T) {
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	for _, tc := range []struct {
		r    *Record
		want string // the fingerprint; "" for no command
	}{
		{rec(StatusChanged, &a, &b), b.Fingerprint},
		{rec(StatusPending, nil, &a), a.Fingerprint},
		{rec(StatusPending, nil, nil), ""},
		{rec(StatusVerified, &a, &a), ""},
		{rec(StatusQuarantined, &a, &b), ""},
		{nil, ""},
	} {
		c, ok := ApproveCommand(tc.r)
		if ok != (tc.want != "") || c.Fingerprint != tc.want || ok && (c.Verb != "approve" || c.Server != "srv") {
			t.Errorf("ApproveCommand(%s) = %+v, %v; want fingerprint %q", StatusOf(tc.r), c, ok, tc.want)
		}
	}
}

func TestParsePosture(t *testing.T) {
	for _, s := range []string{"discovery", "strict"} {
		if p, err := ParsePosture(s); err != nil || string(p) != s {
			t.Errorf("ParsePosture(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParsePosture("tofu"); err == nil {
		t.Error("ParsePosture(tofu) accepted")
	}
}

func manifest(b []byte) ([]mcp.Tool, error) {
	m, err := drift.ParseManifest(b)
	return m.Tools, err
}

func TestEveryActionHasADocumentedRule(t *testing.T) {
	cat := Catalogue()
	actions := []Action{ActionFirstUse, ActionHold, ActionDrift, ActionReseen, ActionApprove, ActionQuarantine, ActionRelease, ActionRollback}
	for _, a := range actions {
		id := RuleOf(a)
		if _, ok := cat.Lookup(id); !ok || id == "" {
			t.Errorf("action %s: rule %q not in the catalogue", a, id)
		}
	}
	if len(cat) != len(actions) {
		t.Errorf("catalogue has %d rules for %d actions", len(cat), len(actions))
	}
}

func TestToolSetHas(t *testing.T) {
	ts := mustSet(t, toolsB)
	names := ts.Names()
	if len(names) < 2 {
		t.Fatalf("fixture has %d tools", len(names))
	}
	for _, n := range names {
		if !ts.Has(n) {
			t.Errorf("Has(%q) = false for a listed tool", n)
		}
	}
	for _, n := range []string{"", "\x00", names[0] + "\x00", "~~~~", strings.ToUpper(names[0]) + "-not-listed"} {
		if ts.Has(n) != slices.Contains(names, n) {
			t.Errorf("Has(%q) = %v", n, ts.Has(n))
		}
	}
	if (ToolSet{}).Has(names[0]) {
		t.Error("an empty set has a tool")
	}
}
