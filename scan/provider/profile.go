// Package provider decides, without calling any model, whether a model
// provider accepts an MCP tool's definition as its own tool: a profile per
// provider mode (OpenAI function calling with and without strict, Anthropic
// tool use with and without strict, Gemini function declarations) is a list
// of constraints, each with its sources and the date they were read, and
// Assess grades a tool against each profile: accepted, accepted with loss
// (keywords the provider ignores, so the model is not held to them) or
// rejected, every violation with its JSON pointer and the constraint it
// breaks.
//
// The profiles are data (profiles/*.json, embedded); the checks they name
// are this package's code. Verdicts are for the tool as the server listed
// it: after the server SDK's own conversion (zod or pydantic to JSON
// Schema), before any client's (see Profile.Conversions).
package provider

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Effect is what breaking a constraint does to a tool.
type Effect string

// Effects.
const (
	// EffectReject: the provider refuses the request that carries the
	// tool (for a request-wide limit, a request carrying this tool alone).
	EffectReject Effect = "reject"
	// EffectLoss: the provider takes the tool but ignores or strips the
	// keyword, so the model is not held to it.
	EffectLoss Effect = "loss"
)

// Repairs a client conversion makes (Constraint.Repair).
const (
	RepairFix   = "fix"
	RepairStrip = "strip"
)

// Basis says what a constraint rests on.
type Basis string

// Bases, strongest first.
const (
	// BasisDocumented: the provider's documentation or API reference
	// states it.
	BasisDocumented Basis = "documented"
	// BasisReported: API errors quoted in public issue threads show it.
	BasisReported Basis = "reported"
	// BasisSDK: the provider's own SDK code enforces or works around it.
	BasisSDK Basis = "sdk"
)

// Source is one place a constraint was read.
type Source struct {
	// Ref is a documentation URL, an issue URL, or "owner/repo:path" for
	// SDK code.
	Ref string `json:"ref"`
	// Read is the date it was read (YYYY-MM-DD).
	Read string `json:"read"`
}

// Constraint is one rule of a profile.
type Constraint struct {
	// ID is stable and unique over every profile ("openai-strict/format").
	ID string `json:"id"`
	// Rule says in one line what a schema must do.
	Rule string `json:"rule"`
	// Check names the check that enforces it (see checks.go) and Params
	// configure it.
	Check  string `json:"check"`
	Params Params `json:"params,omitzero"`
	Effect Effect `json:"effect"`
	Basis  Basis  `json:"basis"`
	// Sources are where the rule was read, each with its date.
	Sources []Source `json:"sources"`
	// Uncertain marks a rule the sources contradict or leave unsettled;
	// Note says which source was followed and why.
	Uncertain bool   `json:"uncertain,omitempty"`
	Note      string `json:"note,omitempty"`
	// RepairedBy names the client conversion (one of the profile's
	// Conversions) that repairs a violation of this constraint before the
	// provider sees the schema; a check may find a violation it cannot
	// repair (an object explicitly open, for additional-properties).
	RepairedBy string `json:"repaired_by,omitempty"`
	// Repair says what that conversion does: "fix" (the schema then
	// meets the constraint) or "strip" (it removes the keyword, so the
	// model is no longer held to it: a loss).
	Repair string `json:"repair,omitempty"`
}

// Params configure a check; each check reads the fields it needs.
type Params struct {
	// Keywords are schema keywords (forbidden, or the only ones allowed).
	Keywords []string `json:"keywords,omitempty"`
	// Values are allowed values (formats, types).
	Values []string `json:"values,omitempty"`
	// Limit is a numeric bound (the largest allowed value).
	Limit int `json:"limit,omitempty"`
	// Over is a second bound: for enum-string-size, how many values an
	// enum must have before Limit applies; for name, the length above
	// which a name is refused only by some sources (uncertain).
	Over int `json:"over,omitempty"`
	// Pattern is a regular expression (Go syntax) a name must match.
	Pattern string `json:"pattern,omitempty"`
}

// Conversion is what a widely used client does to a tool's schema before
// the provider sees it.
type Conversion struct {
	Client string `json:"client"`
	Does   string `json:"does"`
	Source Source `json:"source"`
}

// Profile is one provider mode's constraints on a tool definition.
type Profile struct {
	// ID names the profile on the command line and in reports.
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Mode     string `json:"mode"`
	// Field is where a tool's input schema goes in the provider's request.
	Field string `json:"field"`
	// Enforced is true when the mode constrains the model's arguments to
	// the schema (constrained decoding); false when the schema only
	// informs the model.
	Enforced bool `json:"enforced"`
	// Read is the date the profile's sources were last read (the latest
	// of its constraints' dates).
	Read string `json:"read"`
	// Conversions are the client conversions the verdict comes before.
	Conversions []Conversion `json:"conversions,omitempty"`
	Constraints []Constraint `json:"constraints"`

	// names is Params.Pattern compiled, per constraint id.
	names map[string]*regexp.Regexp
}

// Constraint returns the profile's constraint with that id.
func (p *Profile) Constraint(id string) (Constraint, bool) {
	i := slices.IndexFunc(p.Constraints, func(c Constraint) bool { return c.ID == id })
	if i < 0 {
		return Constraint{}, false
	}
	return p.Constraints[i], true
}

//go:embed profiles/*.json
var profileFS embed.FS

var loaded = sync.OnceValues(func() ([]*Profile, error) { return load(profileFS) })

// Profiles returns every profile, sorted by id. An error means the
// embedded profile data is broken (a test guards against it).
func Profiles() ([]*Profile, error) { return loaded() }

// IDs lists the profile ids, sorted.
func IDs() []string {
	ps, _ := loaded()
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

// Lookup returns the profiles named, in the order given; "all" names every
// profile. An unknown name is an error naming the known ones.
func Lookup(names []string) ([]*Profile, error) {
	ps, err := loaded()
	if err != nil {
		return nil, err
	}
	var out []*Profile
	for _, n := range names {
		if n == "all" {
			return ps, nil
		}
		i := slices.IndexFunc(ps, func(p *Profile) bool { return p.ID == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown provider profile %q (known: %s)", n, strings.Join(IDs(), ", "))
		}
		if !slices.Contains(out, ps[i]) {
			out = append(out, ps[i])
		}
	}
	return out, nil
}

// load reads and checks every profile under profiles/.
func load(fsys fs.FS) ([]*Profile, error) {
	files, err := fs.Glob(fsys, "profiles/*.json")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []*Profile
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		p, err := parseProfile(b)
		if err != nil {
			return nil, fmt.Errorf("provider: %s: %w", f, err)
		}
		for _, c := range p.Constraints {
			if seen[c.ID] {
				return nil, fmt.Errorf("provider: %s: constraint %s defined twice", f, c.ID)
			}
			seen[c.ID] = true
		}
		if seen["profile:"+p.ID] {
			return nil, fmt.Errorf("provider: %s: profile %s defined twice", f, p.ID)
		}
		seen["profile:"+p.ID] = true
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Profile) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

var profileIDRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// parseProfile decodes one profile strictly and checks that every
// constraint names a known check with the parameters it needs, has a
// source with a date, and belongs to the profile.
func parseProfile(b []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the profile")
	}
	if !profileIDRE.MatchString(p.ID) {
		return nil, fmt.Errorf("profile id %q is not lower-case words joined by '-'", p.ID)
	}
	if p.Provider == "" || p.Mode == "" || p.Field == "" || len(p.Constraints) == 0 {
		return nil, errors.New("profile needs provider, mode, field and constraints")
	}
	latest := ""
	p.names = map[string]*regexp.Regexp{}
	for _, c := range p.Constraints {
		if !strings.HasPrefix(c.ID, p.ID+"/") {
			return nil, fmt.Errorf("constraint %s does not belong to profile %s", c.ID, p.ID)
		}
		if c.Rule == "" {
			return nil, fmt.Errorf("constraint %s has no rule", c.ID)
		}
		if c.Effect != EffectReject && c.Effect != EffectLoss {
			return nil, fmt.Errorf("constraint %s: effect %q", c.ID, c.Effect)
		}
		switch c.Basis {
		case BasisDocumented, BasisReported, BasisSDK:
		default:
			return nil, fmt.Errorf("constraint %s: basis %q", c.ID, c.Basis)
		}
		if c.Uncertain && c.Note == "" {
			return nil, fmt.Errorf("constraint %s is uncertain without a note saying why", c.ID)
		}
		if len(c.Sources) == 0 {
			return nil, fmt.Errorf("constraint %s has no source", c.ID)
		}
		for _, s := range c.Sources {
			if s.Ref == "" {
				return nil, fmt.Errorf("constraint %s has a source without a reference", c.ID)
			}
			if _, err := time.Parse(time.DateOnly, s.Read); err != nil {
				return nil, fmt.Errorf("constraint %s: source %s: read date %q", c.ID, s.Ref, s.Read)
			}
			latest = max(latest, s.Read)
		}
		ck, ok := checks[c.Check]
		if !ok {
			return nil, fmt.Errorf("constraint %s: unknown check %q", c.ID, c.Check)
		}
		if err := ck.needs.missing(c.Params); err != nil {
			return nil, fmt.Errorf("constraint %s: check %s: %w", c.ID, c.Check, err)
		}
		if c.Params.Pattern != "" {
			re, err := regexp.Compile(c.Params.Pattern)
			if err != nil {
				return nil, fmt.Errorf("constraint %s: pattern: %w", c.ID, err)
			}
			p.names[c.ID] = re
		}
	}
	if p.Read != latest {
		return nil, fmt.Errorf("profile read date %q is not the latest source date %q", p.Read, latest)
	}
	for _, c := range p.Constraints {
		if c.RepairedBy != "" && !slices.ContainsFunc(p.Conversions, func(cv Conversion) bool { return cv.Client == c.RepairedBy }) {
			return nil, fmt.Errorf("constraint %s: repaired_by %q is not a conversion of the profile", c.ID, c.RepairedBy)
		}
		if (c.RepairedBy != "") != (c.Repair == RepairFix || c.Repair == RepairStrip) {
			return nil, fmt.Errorf("constraint %s: repaired_by needs repair fix or strip, and repair needs repaired_by", c.ID)
		}
	}
	for _, cv := range p.Conversions {
		if cv.Client == "" || cv.Does == "" || cv.Source.Ref == "" {
			return nil, errors.New("a conversion needs a client, what it does and a source")
		}
		if _, err := time.Parse(time.DateOnly, cv.Source.Read); err != nil {
			return nil, fmt.Errorf("conversion %s: read date %q", cv.Client, cv.Source.Read)
		}
	}
	return &p, nil
}

// needs lists the parameters a check requires.
type needs struct {
	keywords, values, limit, pattern bool
}

func (n needs) missing(p Params) error {
	switch {
	case n.keywords && len(p.Keywords) == 0:
		return errors.New("needs keywords")
	case n.values && len(p.Values) == 0:
		return errors.New("needs values")
	case n.limit && p.Limit <= 0:
		return errors.New("needs a limit")
	case n.pattern && p.Pattern == "":
		return errors.New("needs a pattern")
	}
	return nil
}
