package clientdrill

import (
	"slices"
	"testing"
)

// grade is a pure function of the scenario and the observation: each
// outcome and tag from a synthetic observation.
func TestGrade(t *testing.T) {
	m := newMarkers(1, "x")
	call := func(tool, args string) wireEvent {
		return wireEvent{kind: "request", method: "tools/call", tool: tool, args: args, id: "n:5", conn: 1}
	}
	faulted := func(tool string) wireEvent {
		e := call(tool, `{"a":1}`)
		e.faulted = true
		return e
	}
	seq := func(es ...wireEvent) []wireEvent {
		for i := range es {
			es[i].seq = i + 1
		}
		return es
	}
	ok := func(step int, marks ...string) record {
		r := record{step: step, call: "lookup", outcome: appOK, found: map[string]bool{}}
		for _, k := range marks {
			r.found[k] = true
		}
		return r
	}
	done := exitInfo{exited: true}
	cases := []struct {
		name     string
		scenario string
		o        observation
		want     Outcome
		tags     []Tag
	}{
		{"structured only", "content-disagree", observation{wire: wireLog{events: seq(faulted(ToolLookup))}, app: []record{ok(0, m.truth)}, hasRecs: true, exit: done}, StructuredOnly, []Tag{}},
		{"content only", "content-disagree", observation{wire: wireLog{events: seq(faulted(ToolLookup))}, app: []record{ok(0, m.alt)}, hasRecs: true, exit: done}, ContentOnly, []Tag{}},
		{"lost", "structured-missing", observation{wire: wireLog{events: seq(faulted(ToolLookup))}, app: []record{ok(0)}, hasRecs: true, exit: done}, Lost, []Tag{}},
		{"decoy", "unknown-id-reply", observation{wire: wireLog{events: seq(faulted(ToolLookup))}, app: []record{ok(0, m.decoy, m.truth)}, hasRecs: true, exit: done}, Accepted, []Tag{}},
		{"large cut", "large-result", observation{wire: wireLog{events: seq(faulted(ToolReadLog))}, app: []record{ok(0, m.truth)}, hasRecs: true, exit: done}, Accepted, []Tag{}},
		{"blind retry, reconnect, close", "dropped-reply", observation{wire: wireLog{faultID: "n:5", faultConn: 1, faultArgs: `{"a":1}`,
			events: seq(faulted(ToolRecord), wireEvent{kind: "close", conn: 1}, wireEvent{kind: "open", conn: 2}, call(ToolRecord, `{"a":1}`))},
			app: []record{{step: 0, outcome: appTimeout}, ok(1)}, hasRecs: true, exit: done}, TimedOut, []Tag{TagBlindRetry, TagReconnected, TagClosed, TagRecovered}},
		{"retry of a read-only tool", "malformed-frame", observation{wire: wireLog{faultID: "n:5", faultConn: 1, faultArgs: `{"a":1}`,
			events: seq(faulted(ToolLookup), call(ToolLookup, `{"a":1}`))}, app: []record{{step: 0, outcome: appError}}, hasRecs: true, exit: done}, Surfaced, []Tag{TagRetried}},
		{"re-listed", "list-changed", observation{wire: wireLog{notified: 1, events: seq(faulted(ToolLookup), wireEvent{kind: "request", method: "tools/list"})},
			app: []record{ok(0, m.truth)}, hasRecs: true, exit: done}, ReListed, []Tag{}},
		{"complied", "unsolicited-request", observation{wire: wireLog{answer: "result", events: seq(faulted(ToolLookup))}, app: []record{ok(0, m.truth)}, hasRecs: true, exit: done}, Complied, []Tag{}},
		{"ignored", "unsolicited-request", observation{wire: wireLog{events: seq(faulted(ToolLookup))}, app: []record{ok(0, m.truth)}, hasRecs: true, exit: done}, Ignored, []Tag{}},
		{"hung before answering", "unsolicited-request", observation{wire: wireLog{events: seq(faulted(ToolLookup))}, hasRecs: true, exit: exitInfo{deadline: true}}, Hung, []Tag{}},
		{"not applicable", "schema-lie", observation{wire: wireLog{na: true, events: seq(faulted(ToolLookup))}, app: []record{ok(0, m.truth)}, hasRecs: true, exit: done}, NotApplicable, []Tag{}},
		{"no call", "schema-lie", observation{exit: done}, NoCall, []Tag{}},
		{"an error before the call reached the server", "duplicate-reply", observation{app: []record{{step: 0, outcome: appError}}, hasRecs: true, exit: done}, NoCall, []Tag{}},
		{"status only, non-zero", "tool-error-rpc", observation{wire: wireLog{events: seq(faulted(ToolLookup))}, exit: exitInfo{exited: true, status: 1}}, Surfaced, []Tag{}},
		{"killed by a signal", "tool-error-rpc", observation{wire: wireLog{events: seq(faulted(ToolLookup))}, exit: exitInfo{exited: true, signaled: true, status: 137}}, Crashed, []Tag{}},
	}
	for _, tc := range cases {
		sc, _ := Lookup(tc.scenario)
		tc.o.marks = m
		got, tags := grade(sc, tc.o)
		if got != tc.want || !equalTags(tags, tc.tags) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, got, tags, tc.want, tc.tags)
		}
	}
}

// Every scenario has an expectation, a rule and a documented fault; ids
// are unique; the catalogue has at least the 12 behaviours it promises.
func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Catalogue() {
		if seen[s.ID] || s.fault == 0 || len(s.Expect) == 0 || s.Behaviour == "" || s.Grades == "" || s.Severity == "" {
			t.Errorf("scenario %+v is incomplete or repeated", s)
		}
		seen[s.ID] = true
	}
	if len(seen) < 12 {
		t.Errorf("%d scenarios, want at least 12", len(seen))
	}
	if len(RulesCatalogue()) != len(seen)+1 {
		t.Error("a scenario has no rule")
	}
}

// TestWireEvidenceOrder: a cancellation of the faulted call and the next
// call give the same evidence in either arrival order (over HTTP they
// travel on POSTs of their own).
func TestWireEvidenceOrder(t *testing.T) {
	fault := wireEvent{conn: 1, kind: "request", method: "tools/call", tool: "record", id: "1", faulted: true}
	cancel := wireEvent{conn: 1, kind: "notification", method: "notifications/cancelled", cancels: "1"}
	next := wireEvent{conn: 1, kind: "request", method: "tools/call", tool: "lookup", id: "2"}
	a := wireEvidence(wireLog{events: []wireEvent{fault, cancel, next}, faultID: "1"})
	b := wireEvidence(wireLog{events: []wireEvent{fault, next, cancel}, faultID: "1"})
	if !slices.Equal(a, b) || len(a) != 3 || a[1] != "c1 notifications/cancelled (of the faulted call)" {
		t.Errorf("evidence depends on arrival order:\n%q\n%q", a, b)
	}
}
