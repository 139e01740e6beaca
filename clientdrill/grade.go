package clientdrill

import (
	"fmt"
	"slices"
	"strings"
)

// wireLog is what the server saw in one scenario.
type wireLog struct {
	events    []wireEvent
	rev       string
	faultConn int
	faultID   string
	faultArgs string
	notified  int
	asked     string
	answer    string
	na        bool
}

// exitInfo is how the client process ended.
type exitInfo struct {
	// exited: it ended on its own (status or signal); otherwise mcpdrill
	// ended it.
	exited   bool
	status   int
	signaled bool
	// deadline: mcpdrill ended it at the faulted call's deadline, with no
	// outcome reported (as opposed to after its last step).
	deadline bool
}

// observation is everything a verdict is read from.
type observation struct {
	wire    wireLog
	app     []record
	exit    exitInfo
	marks   markers
	hasRecs bool // the client wrote report lines
}

// Grade decides a scenario's outcome and tags from what was observed.
func grade(sc Scenario, o observation) (Outcome, []Tag) {
	w := o.wire
	fi := slices.IndexFunc(w.events, func(e wireEvent) bool { return e.faulted })
	rec := func(step int) *record {
		for i := range o.app {
			if o.app[i].step == step {
				return &o.app[i]
			}
		}
		return nil
	}
	r0 := rec(0)
	var tags []Tag
	if fi >= 0 {
		tags = wireTags(sc, w, fi)
	}
	if r1 := rec(1); r1 != nil && r1.outcome == appOK && fi >= 0 {
		tags = append(tags, TagRecovered)
	}
	tags = ordered(tags)
	switch {
	case w.na:
		return NotApplicable, tags
	case fi < 0:
		// Whatever the application reports, the fault never happened.
		return NoCall, tags
	}
	if sc.Wire {
		switch sc.fault {
		case faultListChanged:
			if w.notified > 0 && slices.ContainsFunc(w.events, func(e wireEvent) bool {
				return e.seq > w.notified && e.kind == "request" && e.method == "tools/list"
			}) {
				return ReListed, tags
			}
		case faultUnsolicited:
			switch w.answer {
			case "error":
				return Refused, tags
			case "result":
				return Complied, tags
			}
		}
		if !o.hasRecs || r0 == nil {
			if o.exit.deadline {
				return Hung, tags
			}
			if o.hasRecs || o.exit.signaled {
				return Crashed, tags
			}
		}
		if sc.fault == faultListChanged {
			return Stale, tags
		}
		return Ignored, tags
	}
	if !o.hasRecs {
		switch {
		case o.exit.deadline:
			return Hung, tags
		case o.exit.signaled:
			return Crashed, tags
		case o.exit.exited && o.exit.status == 0:
			return Completed, tags
		case o.exit.exited:
			return Surfaced, tags
		}
		return Completed, tags
	}
	if r0 == nil {
		if o.exit.exited {
			return Crashed, tags
		}
		return Hung, tags
	}
	switch r0.outcome {
	case appError:
		return Surfaced, tags
	case appTimeout:
		return TimedOut, tags
	}
	m, f := o.marks, r0.found
	switch sc.fault {
	case faultSchemaLie, faultNoStructured:
		if f[m.lie] {
			return Accepted, tags
		}
		return Lost, tags
	case faultDisagree:
		switch {
		case f[m.truth] && f[m.alt]:
			return Both, tags
		case f[m.truth]:
			return StructuredOnly, tags
		case f[m.alt]:
			return ContentOnly, tags
		}
		return Lost, tags
	case faultRPCError, faultIsError:
		if f[m.errText] {
			return Surfaced, tags
		}
		return Accepted, tags
	case faultLarge:
		if f[m.truth] && f[m.tail] {
			return Delivered, tags
		}
		return Accepted, tags
	case faultUnknownID:
		if f[m.decoy] {
			return Accepted, tags
		}
	}
	if f[m.truth] {
		return Delivered, tags
	}
	if sc.fault == faultDuplicate || sc.fault == faultUnknownID {
		return Lost, tags
	}
	return Accepted, tags
}

// wireTags reads the behaviours after the faulted call (events[fi]).
func wireTags(sc Scenario, w wireLog, fi int) []Tag {
	var tags []Tag
	add := func(t Tag) {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	closedAt := -1
	for _, e := range w.events[fi+1:] {
		switch {
		case e.kind == "notification" && e.method == "notifications/cancelled" && e.cancels == w.faultID && e.conn == w.faultConn:
			add(TagCancelled)
		case e.kind == "request" && e.method == "tools/call" && e.tool == sc.Tool && e.args == w.faultArgs:
			if sc.Tool == ToolRecord {
				add(TagBlindRetry)
			} else {
				add(TagRetried)
			}
		case e.kind == "request" && e.method == "tools/list" && sc.fault != faultListChanged:
			add(TagReListed)
		case e.kind == "open":
			add(TagReconnected)
		case e.kind == "close" && e.conn == w.faultConn:
			closedAt = e.seq
		}
		if closedAt > 0 && e.kind == "request" && e.seq > closedAt {
			add(TagClosed)
		}
	}
	return tags
}

func ordered(tags []Tag) []Tag {
	out := []Tag{}
	for _, t := range tagOrder {
		if slices.Contains(tags, t) {
			out = append(out, t)
		}
	}
	return out
}

// wireEvidence lists what the client sent from the faulted call on, without
// pings and at most 24 entries.
func wireEvidence(w wireLog) []string {
	out := []string{}
	fi := slices.IndexFunc(w.events, func(e wireEvent) bool { return e.faulted })
	if fi < 0 {
		return out
	}
	for _, e := range cancelsFirst(w.events[fi:], w.faultID) {
		if e.method == "ping" || (e.kind == "response" && e.id != w.asked) {
			continue
		}
		if len(out) == 24 {
			out = append(out, "…")
			break
		}
		s := fmt.Sprintf("c%d ", e.conn)
		switch e.kind {
		case "open":
			s += "new connection"
		case "close":
			s += "closed by the client"
		case "response":
			s += "answered the server's request with " + map[bool]string{true: "an error", false: "a result"}[e.isError]
		default:
			s += e.method
			if e.tool != "" {
				s += " " + e.tool
			}
			switch {
			case e.faulted:
				s += " (the faulted call)"
			case e.cancels != "" && e.cancels == w.faultID:
				s += " (of the faulted call)"
			case e.tool != "" && e.tool == w.events[fi].tool && e.args == w.faultArgs:
				s += " (same arguments)"
			}
		}
		out = append(out, s)
	}
	return out
}

// appEvidence says what the application reported, naming markers, never
// values.
func appEvidence(o observation) string {
	if !o.hasRecs {
		return "no report lines"
	}
	var parts []string
	for step := 0; step < 2; step++ {
		name := [...]string{"faulted call", "next call"}[step]
		i := slices.IndexFunc(o.app, func(r record) bool { return r.step == step })
		if i < 0 {
			parts = append(parts, name+": no report")
			continue
		}
		r := o.app[i]
		s := name + ": " + r.outcome
		var carried []string
		for _, k := range []struct{ m, what string }{{o.marks.truth, "the true value"}, {o.marks.lie, "the lie"},
			{o.marks.alt, "the content text's value"}, {o.marks.decoy, "the decoy"}, {o.marks.errText, "the tool error's text"}, {o.marks.tail, "the end of the large value"}} {
			if r.found[k.m] {
				carried = append(carried, k.what)
			}
		}
		if len(carried) > 0 {
			s += " carrying " + strings.Join(carried, ", ")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func exitEvidence(e exitInfo) string {
	switch {
	case e.deadline:
		return "still running at the deadline: ended by mcpdrill"
	case !e.exited:
		return "still running after its last step: ended by mcpdrill"
	case e.signaled:
		return fmt.Sprintf("ended by signal %d", e.status-128)
	}
	return fmt.Sprintf("exit status %d", e.status)
}

// cancelsFirst returns events (the faulted call first) with the
// cancellations of the faulted call moved right after it, the rest in
// arrival order. Over Streamable HTTP a client's cancellation and its next
// request travel on POSTs of their own, so which arrives first is the
// machine's doing, not the client's: the evidence must not depend on it.
func cancelsFirst(events []wireEvent, faultID string) []wireEvent {
	out := make([]wireEvent, 0, len(events))
	out = append(out, events[0])
	for _, e := range events[1:] {
		if e.cancels != "" && e.cancels == faultID {
			out = append(out, e)
		}
	}
	for _, e := range events[1:] {
		if e.cancels == "" || e.cancels != faultID {
			out = append(out, e)
		}
	}
	return out
}
