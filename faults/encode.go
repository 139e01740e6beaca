package faults

import (
	"encoding/json"
	"fmt"
	"time"
)

// planDoc and ruleDoc are a plan in the plan-file format, every field
// explicit: struct fields keep their order and maps are sorted by
// encoding/json, so one plan has one encoding.
type planDoc struct {
	Seed    uint64    `json:"seed"`
	Session string    `json:"session"`
	Rules   []ruleDoc `json:"rules"`
}

type ruleDoc struct {
	Name      string         `json:"name"`
	Fault     string         `json:"fault"`
	Params    map[string]any `json:"params,omitempty"`
	Direction string         `json:"direction"`
	// Methods and Kinds are always written, [] included: a rule without
	// them would take its fault's defaults when read back.
	Methods     []string `json:"methods"`
	Tool        string   `json:"tool,omitempty"`
	Kinds       []string `json:"kinds"`
	Probability float64  `json:"probability"`
	Nth         int      `json:"nth,omitempty"`
	After       int      `json:"after,omitempty"`
	Every       int      `json:"every,omitempty"`
	Limit       int      `json:"limit,omitempty"`
}

// MarshalJSON writes the plan as a plan file (JSON) with every default
// resolved: the seed, the session, and per rule its name, parameters,
// matchers, probability and counts. [ParsePlan] reads it back to a plan
// that decides every frame the same way, and a second encoding of that
// plan is byte for byte the first.
func (p *Plan) MarshalJSON() ([]byte, error) {
	doc := planDoc{Seed: p.Seed, Session: p.Session, Rules: make([]ruleDoc, 0, len(p.Rules))}
	for i := range p.Rules {
		r := &p.Rules[i]
		rd := ruleDoc{
			Name: r.Name, Fault: r.Fault, Direction: r.Direction.String(),
			Methods: append([]string{}, r.Methods...), Tool: r.Tool, Kinds: make([]string, 0, len(r.Kinds)),
			Probability: r.Probability, Nth: r.Nth, After: r.After, Every: r.Every, Limit: r.Limit,
		}
		for _, k := range r.Kinds {
			rd.Kinds = append(rd.Kinds, k.String())
		}
		if len(r.Params) > 0 {
			rd.Params = make(map[string]any, len(r.Params))
			for k, v := range r.Params {
				switch x := v.(type) {
				case time.Duration:
					rd.Params[k] = x.String()
				case int64, float64, string, bool:
					rd.Params[k] = x
				default:
					return nil, fmt.Errorf("faults: rule %d: param %q has type %T", i, k, v)
				}
			}
		}
		doc.Rules = append(doc.Rules, rd)
	}
	return json.Marshal(doc)
}
