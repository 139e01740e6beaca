package faults

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// ParamType is the type of one fault parameter.
type ParamType string

// Parameter types.
const (
	TypeDuration ParamType = "duration" // "250ms", "2s", or a number of milliseconds
	TypeInt      ParamType = "int"
	TypeFloat    ParamType = "float"
	TypeString   ParamType = "string"
	TypeBool     ParamType = "bool"
	TypeEnum     ParamType = "enum" // one of Param.Choices
)

// Param describes one fault parameter.
type Param struct {
	Name    string
	Type    ParamType
	Default any // typed: time.Duration, int64, float64, string or bool
	Choices []string
	Help    string
}

// Spec describes one fault: what the client observes, its parameters, and
// the matcher a rule gets when it does not say otherwise.
type Spec struct {
	Name string
	// Observed is what a client sees when the fault fires.
	Observed string
	Params   []Param
	// Default matcher fields, used for each field a rule leaves unset.
	Direction Direction
	Kinds     []Kind
	Methods   []string
}

// Fault names.
const (
	FaultTimeout     = "timeout"
	FaultLatency     = "latency"
	FaultCorrupt     = "corrupt"
	FaultTruncate    = "truncate"
	FaultMalformed   = "malformed"
	FaultError       = "error"
	FaultDrop        = "drop"
	FaultDuplicate   = "duplicate"
	FaultSchemaBreak = "schema-break"
	FaultDropTool    = "drop-tool"
	FaultRugPull     = "rug-pull"
	FaultDisconnect  = "disconnect"
	FaultSlow        = "slow"
)

// Malformed variants.
var malformedVariants = []string{"invalid-json", "wrong-version", "unknown-id", "missing-id", "result-and-error"}

var responses = []Kind{KindResponse, KindError}

var catalogue = []Spec{
	{Name: FaultTimeout, Direction: ToClient, Kinds: responses,
		Observed: "the frame is withheld and never delivered: the request it answers hangs until the client's own timer fires (over HTTP the POST stays open)"},
	{Name: FaultLatency, Direction: ToClient,
		Observed: "the frame arrives late by latency ± jitter (seeded); other frames are not held behind it",
		Params: []Param{
			{Name: "latency", Type: TypeDuration, Default: time.Second, Help: "base delay"},
			{Name: "jitter", Type: TypeDuration, Default: time.Duration(0), Help: "uniform ± spread around the base delay (seeded)"},
		}},
	{Name: FaultCorrupt, Direction: ToClient, Kinds: []Kind{KindResponse},
		Observed: "the message is still valid MCP with the same structure and JSON types, but the values the protocol leaves free (structuredContent, text content, descriptions and titles; never a name, a type keyword or the envelope) are sentinels (the scanner's own corruption)"},
	{Name: FaultTruncate, Direction: ToClient,
		Observed: "the frame is cut at a seeded byte offset: a cut line on stdio, a short body or a cut SSE event over HTTP, then the HTTP connection is closed",
		Params: []Param{
			{Name: "keep", Type: TypeFloat, Default: 0.0, Help: "fraction of the frame to keep in (0,1); 0 picks a seeded offset"},
		}},
	{Name: FaultMalformed, Direction: ToClient, Kinds: responses,
		Observed: "the frame breaks JSON-RPC: invalid JSON, a wrong jsonrpc version, an id the client never sent, no id, or both result and error",
		Params: []Param{
			{Name: "variant", Type: TypeEnum, Default: "random", Choices: append([]string{"random"}, malformedVariants...), Help: "which violation; random picks one per firing (seeded)"},
		}},
	{Name: FaultError, Direction: ToClient, Kinds: []Kind{KindResponse},
		Observed: "a JSON-RPC error with the request's id arrives instead of the result (on a c2s request the server never sees it and the proxy answers)",
		Params: []Param{
			{Name: "code", Type: TypeInt, Default: int64(-32603), Help: "JSON-RPC error code"},
			{Name: "message", Type: TypeString, Default: "mcpdrill: injected error", Help: "error message"},
		}},
	{Name: FaultDrop, Direction: ToClient,
		Observed: "the frame vanishes (over HTTP a JSON reply becomes 202 Accepted with no body)"},
	{Name: FaultDuplicate, Direction: ToClient,
		Observed: "the frame is delivered twice in a row (over HTTP a JSON reply becomes an SSE stream of two events)"},
	{Name: FaultSchemaBreak, Direction: ToClient, Kinds: []Kind{KindResponse},
		Observed: "nodes inside structuredContent, JSON text content and tool arguments change JSON type (number to string, array to object …), so output-schema validation fails while the message stays valid MCP"},
	{Name: FaultDropTool, Direction: ToClient, Kinds: []Kind{KindResponse}, Methods: []string{"tools/list"},
		Observed: "a tool is missing from the tools/list result",
		Params: []Param{
			{Name: "name", Type: TypeString, Default: "", Help: "glob of the tool(s) to remove; empty picks one (seeded)"},
			{Name: "notify", Type: TypeBool, Default: false, Help: "also send notifications/tools/list_changed after the response"},
		}},
	{Name: FaultRugPull, Direction: ToClient, Kinds: []Kind{KindResponse}, Methods: []string{"tools/list"},
		Observed: "a tool listed by tools/list has a changed description and/or input schema (an added required property)",
		Params: []Param{
			{Name: "name", Type: TypeString, Default: "", Help: "glob of the tool(s) to change; empty picks one (seeded)"},
			{Name: "change", Type: TypeEnum, Default: "both", Choices: []string{"description", "schema", "both"}, Help: "what changes"},
			{Name: "notify", Type: TypeBool, Default: false, Help: "also send notifications/tools/list_changed after the response"},
		}},
	{Name: FaultDisconnect, Direction: ToClient,
		Observed: "the connection ends at this frame, which is not delivered: stdio closes both streams (close) or kills the server (kill); HTTP aborts the response",
		Params: []Param{
			{Name: "mode", Type: TypeEnum, Default: "close", Choices: []string{"close", "kill"}, Help: "close the streams, or SIGKILL the server process"},
		}},
	{Name: FaultSlow, Direction: ToClient,
		Observed: "the frame arrives in small writes separated by gaps, testing the client's framing of partial reads",
		Params: []Param{
			{Name: "chunk", Type: TypeInt, Default: int64(16), Help: "bytes per write"},
			{Name: "gap", Type: TypeDuration, Default: 10 * time.Millisecond, Help: "pause between writes"},
		}},
}

// Catalogue returns every fault, sorted by name. The slice is a copy.
func Catalogue() []Spec {
	out := append([]Spec(nil), catalogue...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the fault named name.
func Lookup(name string) (Spec, bool) {
	for _, s := range catalogue {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Names returns the fault names, sorted.
func Names() []string {
	var out []string
	for _, s := range Catalogue() {
		out = append(out, s.Name)
	}
	return out
}

// FormatDefault renders a parameter's default for listings.
func (p Param) FormatDefault() string {
	switch v := p.Default.(type) {
	case time.Duration:
		return v.String()
	case string:
		if v == "" {
			return `""`
		}
		return v
	default:
		return fmt.Sprint(v)
	}
}

// MarshalJSON writes the catalogue entry as listings show it: the default
// matcher by name, and every parameter (an empty list when there are none).
func (s Spec) MarshalJSON() ([]byte, error) {
	var kinds []string
	for _, k := range s.Kinds {
		kinds = append(kinds, k.String())
	}
	params := s.Params
	if params == nil {
		params = []Param{}
	}
	return json.Marshal(struct {
		Name      string   `json:"name"`
		Observed  string   `json:"observed"`
		Direction string   `json:"direction"`
		Kinds     []string `json:"kinds,omitempty"`
		Methods   []string `json:"methods,omitempty"`
		Params    []Param  `json:"params"`
	}{s.Name, s.Observed, s.Direction.String(), kinds, s.Methods, params})
}

// MarshalJSON writes the parameter with its default as listings show it
// (FormatDefault).
func (p Param) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name    string    `json:"name"`
		Type    ParamType `json:"type"`
		Default string    `json:"default"`
		Choices []string  `json:"choices,omitempty"`
		Help    string    `json:"help"`
	}{p.Name, p.Type, p.FormatDefault(), p.Choices, p.Help})
}

// Params are a rule's resolved fault parameters: every parameter of the
// fault, typed, with defaults filled in.
type Params map[string]any

// Duration returns a duration parameter (0 if absent).
func (p Params) Duration(name string) time.Duration { d, _ := p[name].(time.Duration); return d }

// Int returns an int parameter (0 if absent).
func (p Params) Int(name string) int64 { n, _ := p[name].(int64); return n }

// Float returns a float parameter (0 if absent).
func (p Params) Float(name string) float64 { f, _ := p[name].(float64); return f }

// String returns a string or enum parameter ("" if absent).
func (p Params) String(name string) string { s, _ := p[name].(string); return s }

// Bool returns a bool parameter (false if absent).
func (p Params) Bool(name string) bool { b, _ := p[name].(bool); return b }

// resolveParams checks raw parameters against the spec and fills defaults.
// Every problem is returned.
func resolveParams(spec Spec, raw map[string]any) (Params, []error) {
	out := Params{}
	var errs []error
	known := map[string]bool{}
	for _, p := range spec.Params {
		known[p.Name] = true
		v, ok := raw[p.Name]
		if !ok {
			out[p.Name] = p.Default
			continue
		}
		tv, err := convertParam(p, v)
		if err != nil {
			errs = append(errs, fmt.Errorf("param %q: %w", p.Name, err))
			continue
		}
		out[p.Name] = tv
	}
	var unknown []string
	for k := range raw {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		errs = append(errs, fmt.Errorf("param %q: unknown for fault %s", k, spec.Name))
	}
	return out, errs
}

func convertParam(p Param, v any) (any, error) {
	switch p.Type {
	case TypeDuration:
		var d time.Duration
		switch x := v.(type) {
		case string:
			var err error
			if d, err = time.ParseDuration(strings.TrimSpace(x)); err != nil {
				ms, err2 := strconv.ParseFloat(strings.TrimSpace(x), 64)
				if err2 != nil {
					return nil, fmt.Errorf("want a duration like 250ms, got %q", x)
				}
				d = msDuration(ms)
			}
		default:
			f, ok := jsonvalue.Number(v)
			if !ok {
				return nil, fmt.Errorf("want a duration, got %T", v)
			}
			d = msDuration(f)
		}
		if d < 0 {
			return nil, fmt.Errorf("must not be negative, got %s", d)
		}
		if d > 24*time.Hour {
			return nil, fmt.Errorf("must be at most 24h, got %s", d)
		}
		return d, nil
	case TypeInt:
		f, ok := jsonvalue.Number(v)
		if !ok {
			s, isStr := v.(string)
			if !isStr {
				return nil, fmt.Errorf("want an integer, got %T", v)
			}
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("want an integer, got %q", s)
			}
			f = float64(n)
		}
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, fmt.Errorf("want an integer, got %v", f)
		}
		if p.Name == "chunk" && f < 1 {
			return nil, fmt.Errorf("must be at least 1, got %v", f)
		}
		return int64(f), nil
	case TypeFloat:
		f, ok := jsonvalue.Number(v)
		if !ok {
			if s, isStr := v.(string); isStr {
				var err error
				if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
					return nil, fmt.Errorf("want a number, got %q", s)
				}
			} else {
				return nil, fmt.Errorf("want a number, got %T", v)
			}
		}
		if math.IsNaN(f) || f < 0 || f >= 1 {
			return nil, fmt.Errorf("must be within [0,1), got %v", f)
		}
		return f, nil
	case TypeString:
		switch x := v.(type) {
		case string:
			return x, nil
		case int, int64, uint64, float64, bool:
			return fmt.Sprint(x), nil
		}
		return nil, fmt.Errorf("want a string, got %T", v)
	case TypeBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			b, err := strconv.ParseBool(strings.TrimSpace(x))
			if err != nil {
				return nil, fmt.Errorf("want true or false, got %q", x)
			}
			return b, nil
		}
		return nil, fmt.Errorf("want true or false, got %T", v)
	case TypeEnum:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want one of %s, got %T", strings.Join(p.Choices, "|"), v)
		}
		for _, c := range p.Choices {
			if c == s {
				return s, nil
			}
		}
		return nil, fmt.Errorf("want one of %s, got %q", strings.Join(p.Choices, "|"), s)
	}
	return nil, fmt.Errorf("unsupported parameter type %s", p.Type)
}

func msDuration(ms float64) time.Duration {
	if math.IsNaN(ms) || ms > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 25 * time.Hour // rejected by the range check
	}
	return time.Duration(ms * float64(time.Millisecond))
}
