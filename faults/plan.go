package faults

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// Plan is a validated set of fault rules and the seed that drives them.
type Plan struct {
	Seed uint64
	// SeedSet is true when the plan file named a seed.
	SeedSet bool
	// Session names this run in the decision function; two proxies with the
	// same seed but different sessions get different faults.
	Session string
	Rules   []Rule
}

// Rule is matcher + fault + probability + count limits. Counts (Nth, After,
// Every, Limit) are over the frames this rule matched, per direction, in the
// order the proxy read them.
type Rule struct {
	// Name labels the rule in the event log; it defaults to "<index>:<fault>".
	Name   string
	Fault  string
	Params Params

	Direction Direction
	// Methods are globs (path.Match) on the frame's method; a response is
	// matched by its request's method. Empty matches every frame but the
	// lifecycle ones ([IsLifecycle]), which only a pattern that names them
	// matches ([Rule.NamesMethod]).
	Methods []string
	// Tool is a glob on the tools/call tool name (request and response).
	// Empty matches every frame, including frames with no tool.
	Tool string
	// Kinds restricts the frame kinds; empty matches every kind.
	Kinds []Kind

	// Probability of firing on an eligible frame, in [0,1].
	Probability float64
	// Nth, when > 0, makes only the Nth matching frame eligible (1-based).
	Nth int
	// After, when > 0, skips the first After matching frames.
	After int
	// Every, when > 0, makes every Every-th matching frame eligible.
	Every int
	// Limit, when > 0, caps how many times the rule fires.
	Limit int
}

// Matches reports whether the frame passes the rule's static matchers
// (direction, method, tool, kind). Counts and probability are the Decider's.
func (r *Rule) Matches(f *Frame) bool {
	if r.Direction != AnyDirection && r.Direction != f.Dir {
		return false
	}
	if len(r.Kinds) > 0 && !slices.Contains(r.Kinds, f.Kind) {
		return false
	}
	if len(r.Methods) > 0 && !slices.ContainsFunc(r.Methods, func(m string) bool { return globMatch(m, f.Method) }) {
		return false
	}
	if r.Tool != "" && (f.Tool == "" || !globMatch(r.Tool, f.Tool)) {
		return false
	}
	if IsLifecycle(f.Method) && !r.NamesMethod(f.Method) {
		return false
	}
	return true
}

// IsLifecycle reports whether method is one of the messages a session
// cannot start or stay alive without: initialize, notifications/initialized,
// ping and server/discover (the modern era's handshake; no other era sends
// it). A frame with such a method, or a response to such a request, is
// exempt from every rule that does not name the method ([Rule.NamesMethod]),
// so that a plan built for tool traffic never breaks the handshake.
func IsLifecycle(method string) bool {
	switch method {
	case "initialize", "notifications/initialized", "ping", "server/discover":
		return true
	}
	return false
}

// NamesMethod reports whether one of the rule's method patterns names
// method: matches it without a `*`. "initialize", "pin?" and
// "notifications/initiali[sz]ed" name their methods; "*", "notifications/*"
// and an empty method list do not.
//
// A pattern with a `*` that matches a lifecycle method also matches a
// method that is not one (the `*` stretches, or stands for itself in a
// class), so the exemption never leaves a rule that no frame can match:
// [Decider.MayFireAt] stays exact.
func (r *Rule) NamesMethod(method string) bool {
	return slices.ContainsFunc(r.Methods, func(m string) bool {
		return !strings.Contains(m, "*") && globMatch(m, method)
	})
}

func globMatch(pattern, s string) bool {
	if !strings.ContainsAny(pattern, `*?[\`) {
		return pattern == s // no metacharacter: path.Match is equality
	}
	ok, err := path.Match(pattern, s)
	return err == nil && ok
}

// planKeys and ruleKeys are the keys of a plan file (YAML or JSON):
//
//	seed: 7
//	session: demo
//	rules:
//	  - name: slow-search
//	    fault: latency
//	    params: {latency: 2s, jitter: 500ms}
//	    direction: s2c          # c2s | s2c | any
//	    method: tools/call      # or methods: [tools/call, tools/list]
//	    tool: "search*"
//	    kinds: [response]
//	    probability: 0.5
//	    nth: 0
//	    after: 0
//	    every: 0
//	    limit: 0
var planKeys = []string{"seed", "session", "rules"}
var ruleKeys = []string{"name", "fault", "params", "direction", "method", "methods", "tool", "kind", "kinds", "probability", "rate", "nth", "after", "every", "limit"}

// ParsePlan reads a plan from YAML or JSON. An invalid plan is rejected with
// every problem found, joined with errors.Join.
func ParsePlan(data []byte) (*Plan, error) {
	var doc any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("faults: plan: %w", err)
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("faults: plan: want a mapping with seed, session and rules")
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if !slices.Contains(planKeys, k) {
			bad("%s: unknown key (want %s)", k, strings.Join(planKeys, ", "))
		}
	}
	p := &Plan{Session: "default"}
	if v, ok := top["seed"]; ok {
		s, err := toUint64(v)
		if err != nil {
			bad("seed: %v", err)
		}
		p.Seed, p.SeedSet = s, true
	}
	if v, ok := top["session"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" {
			bad("session: want a non-empty string")
		} else {
			p.Session = s
		}
	}
	rules, isList := top["rules"].([]any)
	_, present := top["rules"]
	switch {
	case !present:
		bad("rules: missing")
	case !isList:
		bad("rules: want a list")
	case len(rules) == 0:
		bad("rules: empty")
	}
	for i, rv := range rules {
		m, ok := rv.(map[string]any)
		if !ok {
			bad("rules[%d]: want a mapping", i)
			continue
		}
		r, rerrs := parseRule(i, m)
		for _, e := range rerrs {
			bad("rules[%d]: %v", i, e)
		}
		p.Rules = append(p.Rules, r)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("faults: invalid plan: %w", errors.Join(errs...))
	}
	return p, nil
}

func parseRule(i int, m map[string]any) (Rule, []error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(ruleKeys, k) {
			bad("%s: unknown key", k)
		}
	}
	r := Rule{Probability: 1}
	name, _ := m["fault"].(string)
	spec, ok := Lookup(name)
	switch {
	case name == "":
		bad("fault: missing (one of %s)", strings.Join(Names(), ", "))
	case !ok:
		bad("fault: unknown fault %q (one of %s)", name, strings.Join(Names(), ", "))
	}
	r.Fault = name
	if v, ok := m["name"]; ok {
		s, isStr := v.(string)
		if !isStr {
			bad("name: want a string")
		}
		r.Name = s
	}
	rawParams := map[string]any{}
	if v, ok := m["params"]; ok && v != nil {
		pm, isMap := v.(map[string]any)
		if !isMap {
			bad("params: want a mapping")
		}
		rawParams = pm
	}
	if spec.Name != "" {
		ps, perrs := resolveParams(spec, rawParams)
		r.Params = ps
		errs = append(errs, perrs...)
	}
	dirSet, kindSet, methodSet := false, false, false
	if v, ok := m["direction"]; ok {
		s, _ := v.(string)
		d, err := ParseDirection(s)
		if err != nil {
			bad("direction: %v", err)
		}
		r.Direction, dirSet = d, true
	}
	// eachString calls do for every string given under one of keys (a
	// string or a list of them) and reports whether any of keys was given.
	eachString := func(keys []string, do func(key, s string)) bool {
		set := false
		for _, key := range keys {
			v, ok := m[key]
			if !ok {
				continue
			}
			list, err := stringList(v)
			if err != nil {
				bad("%s: %v", key, err)
			}
			for _, s := range list {
				do(key, s)
			}
			set = true
		}
		return set
	}
	methodSet = eachString([]string{"method", "methods"}, func(key, g string) {
		if _, err := path.Match(g, ""); err != nil {
			bad("%s: bad glob %q", key, g)
		}
		r.Methods = append(r.Methods, g)
	})
	if v, ok := m["tool"]; ok {
		s, isStr := v.(string)
		if !isStr {
			bad("tool: want a glob string")
		} else if _, err := path.Match(s, ""); err != nil {
			bad("tool: bad glob %q", s)
		}
		r.Tool = s
	}
	kindSet = eachString([]string{"kind", "kinds"}, func(key, s string) {
		k, err := ParseKind(s)
		if err != nil {
			bad("%s: %v", key, err)
			return
		}
		r.Kinds = append(r.Kinds, k)
	})
	for _, key := range []string{"probability", "rate"} {
		v, ok := m[key]
		if !ok {
			continue
		}
		f, isNum := jsonvalue.Number(v)
		if !isNum || math.IsNaN(f) || f < 0 || f > 1 {
			bad("%s: want a number within [0,1], got %v", key, v)
			continue
		}
		r.Probability = f
	}
	for _, c := range []struct {
		key string
		dst *int
	}{{"nth", &r.Nth}, {"after", &r.After}, {"every", &r.Every}, {"limit", &r.Limit}} {
		v, ok := m[c.key]
		if !ok {
			continue
		}
		f, isNum := jsonvalue.Number(v)
		if !isNum || f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
			bad("%s: want a non-negative integer, got %v", c.key, v)
			continue
		}
		*c.dst = int(f)
	}
	if r.Nth > 0 && r.Every > 0 {
		bad("nth and every: use one or the other")
	}
	r.applyDefaults(i, spec, dirSet, kindSet, methodSet)
	return r, errs
}

// applyDefaults fills each unset matcher field from the fault's spec.
func (r *Rule) applyDefaults(i int, spec Spec, dirSet, kindSet, methodSet bool) {
	if !dirSet {
		r.Direction = spec.Direction
	}
	if !kindSet {
		r.Kinds = append([]Kind(nil), spec.Kinds...)
	}
	if !methodSet {
		r.Methods = append([]string(nil), spec.Methods...)
	}
	if r.Name == "" {
		r.Name = strconv.Itoa(i) + ":" + r.Fault
	}
}

// FlagOptions are the short options that build a plan without a plan file
// (the CLI binds them to its wrap flags).
type FlagOptions struct {
	// Faults are fault names, each optionally with parameters:
	// "latency:latency=2s:jitter=100ms".
	Faults []string
	// Rate is each rule's probability; nil means 1.
	Rate *float64
	// Only restricts every rule to these method globs (replacing the
	// faults' default methods).
	Only []string
	// Tool is a tool-name glob applied to every rule.
	Tool string
	// Direction, when not empty, replaces the faults' default direction.
	Direction string
	Seed      uint64
	Session   string
}

// OptionError is a problem with one field of FlagOptions. Field is the Go
// field name ("Faults", "Rate", "Only", "Tool", "Direction"), so that a
// caller can word it as its own option; Fault names the fault the problem
// is about, when there is one.
type OptionError struct {
	Field string
	Fault string
	Err   error
}

func (e *OptionError) Error() string {
	if e.Fault != "" {
		return e.Field + " " + e.Fault + ": " + e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

func (e *OptionError) Unwrap() error { return e.Err }

// PlanFromFlags builds one rule per fault from the short options. With
// several faults, each rule rolls independently and the first listed that
// fires on a frame wins. Every problem is reported, each as an
// *OptionError joined into the returned error.
func PlanFromFlags(o FlagOptions) (*Plan, error) {
	var errs []error
	p := &Plan{Seed: o.Seed, Session: o.Session}
	if p.Session == "" {
		p.Session = "default"
	}
	if len(o.Faults) == 0 {
		errs = append(errs, &OptionError{Field: "Faults", Err: errors.New("name at least one fault")})
	}
	if o.Rate != nil && (math.IsNaN(*o.Rate) || *o.Rate < 0 || *o.Rate > 1) {
		errs = append(errs, &OptionError{Field: "Rate", Err: fmt.Errorf("want a number within [0,1], got %v", *o.Rate)})
	}
	for _, g := range o.Only {
		if _, err := path.Match(g, ""); err != nil {
			errs = append(errs, &OptionError{Field: "Only", Err: fmt.Errorf("bad glob %q", g)})
		}
	}
	if _, err := path.Match(o.Tool, ""); err != nil {
		errs = append(errs, &OptionError{Field: "Tool", Err: fmt.Errorf("bad glob %q", o.Tool)})
	}
	var dir Direction
	if o.Direction != "" {
		d, err := ParseDirection(o.Direction)
		if err != nil {
			errs = append(errs, &OptionError{Field: "Direction", Err: err})
		}
		dir = d
	}
	for i, f := range o.Faults {
		parts := strings.Split(strings.TrimSpace(f), ":")
		name := parts[0]
		spec, ok := Lookup(name)
		if !ok {
			errs = append(errs, &OptionError{Field: "Faults", Err: fmt.Errorf("unknown fault %q (one of %s)", name, strings.Join(Names(), ", "))})
			continue
		}
		raw := map[string]any{}
		for _, kv := range parts[1:] {
			k, v, found := strings.Cut(kv, "=")
			if !found || k == "" {
				errs = append(errs, &OptionError{Field: "Faults", Fault: name, Err: fmt.Errorf("parameter %q: want key=value", kv)})
				continue
			}
			raw[k] = v
		}
		params, perrs := resolveParams(spec, raw)
		for _, e := range perrs {
			errs = append(errs, &OptionError{Field: "Faults", Fault: name, Err: e})
		}
		r := Rule{Fault: name, Params: params, Probability: 1, Tool: o.Tool}
		if o.Rate != nil {
			r.Probability = *o.Rate
		}
		if len(o.Only) > 0 {
			r.Methods = append([]string(nil), o.Only...)
		}
		r.Direction = dir
		r.applyDefaults(i, spec, o.Direction != "", false, len(o.Only) > 0)
		p.Rules = append(p.Rules, r)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("faults: invalid options: %w", errors.Join(errs...))
	}
	return p, nil
}

func stringList(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("want strings, got %T", e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a string or a list of strings, got %T", v)
}

func toUint64(v any) (uint64, error) {
	switch x := v.(type) {
	case int:
		if x < 0 {
			return 0, fmt.Errorf("must not be negative, got %d", x)
		}
		return uint64(x), nil
	case int64:
		if x < 0 {
			return 0, fmt.Errorf("must not be negative, got %d", x)
		}
		return uint64(x), nil
	case uint64:
		return x, nil
	case float64:
		if x < 0 || x != math.Trunc(x) || x >= 1<<64 {
			return 0, fmt.Errorf("want a non-negative integer, got %v", x)
		}
		return uint64(x), nil
	case string:
		n, err := strconv.ParseUint(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("want a non-negative integer, got %q", x)
		}
		return n, nil
	}
	return 0, fmt.Errorf("want a non-negative integer, got %T", v)
}

// Target is what a response frame is matched by: the method and tool of the
// request it answers.
type Target struct{ Method, Tool string }

// CouldMatch reports whether some frame travelling in dir could pass the
// rule's matchers, knowing only what a frame's first byte cannot change:
// a response or error there takes the method and tool of the request it
// answers, so it carries one of answers (the requests pending in the other
// direction) or none; a request or notification names its own method and
// tool, so it could carry any; a batch or an invalid frame carries none.
// When CouldMatch is false, no frame presented next in dir, whatever its
// bytes, matches the rule as long as it is correlated with answers only.
func (r *Rule) CouldMatch(dir Direction, answers []Target) bool {
	if r.Direction != AnyDirection && r.Direction != dir {
		return false
	}
	for k := KindInvalid; k <= KindBatch; k++ {
		if len(r.Kinds) > 0 && !slices.Contains(r.Kinds, k) {
			continue
		}
		switch k {
		case KindRequest, KindNotification:
			return true
		case KindResponse, KindError:
			for _, t := range answers {
				if r.Matches(&Frame{Dir: dir, Kind: k, Method: t.Method, Tool: t.Tool}) {
					return true
				}
			}
		}
		if r.Matches(&Frame{Dir: dir, Kind: k}) {
			return true
		}
	}
	return false
}
