package provider

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// check is one kind of constraint: the parameters it needs and how it finds
// violations in a tool.
type check struct {
	needs needs
	run   func(t *tool, c *Constraint, p *Profile, v *violations)
}

// violations collects what the checks of one profile find.
type violations struct {
	list []Violation
}

// add records a violation of c at pointer (relative to the tool).
func (v *violations) add(c *Constraint, pointer, detail string, uncertain bool) {
	v.list = append(v.list, Violation{Constraint: c.ID, Pointer: pointer, Effect: c.Effect,
		Detail: detail, Uncertain: c.Uncertain || uncertain, RepairedBy: c.RepairedBy, Repair: c.Repair})
}

// addUnrepairable records a violation no conversion repairs.
func (v *violations) addUnrepairable(c *Constraint, pointer, detail string) {
	v.add(c, pointer, detail, false)
	v.list[len(v.list)-1].RepairedBy, v.list[len(v.list)-1].Repair = "", ""
}

// checks are the constraint kinds a profile may name. Each one reads the
// tool's schema through the walks of internal/jsonschema (structural, and
// with references resolved by its one resolver).
var checks = map[string]check{
	"root-type-object":       {run: rootTypeObject},
	"root-not":               {needs: needs{keywords: true}, run: rootNot},
	"root-properties":        {run: rootProperties},
	"root-properties-filled": {run: rootPropertiesFilled},
	"valid-schema":           {run: validSchema},
	"name":                   {needs: needs{pattern: true, limit: true}, run: nameCheck},
	"array-items":            {run: arrayItems},
	"type-key":               {run: typeKey},
	"keywords-forbidden":     {needs: needs{keywords: true}, run: keywordsForbidden},
	"keywords-allowed":       {needs: needs{keywords: true}, run: keywordsAllowed},
	"additional-properties":  {run: additionalPropertiesFalse},
	"all-required":           {run: allRequired},
	"required-defined":       {run: requiredDefined},
	"format-allowed":         {needs: needs{values: true}, run: formatAllowed},
	"type-allowed":           {needs: needs{values: true}, run: typeAllowed},
	"enum-primitive":         {run: enumPrimitive},
	"enum-strings":           {run: enumStrings},
	"min-items":              {needs: needs{limit: true}, run: minItems},
	"nesting-depth":          {needs: needs{limit: true}, run: nestingDepth},
	"property-count":         {needs: needs{limit: true}, run: propertyCount},
	"string-size":            {needs: needs{limit: true}, run: stringSize},
	"enum-count":             {needs: needs{limit: true}, run: enumCount},
	"enum-string-size":       {needs: needs{limit: true}, run: enumStringSize},
	"optional-count":         {needs: needs{limit: true}, run: optionalCount},
	"union-count":            {needs: needs{limit: true}, run: unionCount},
	"ref-cycle":              {run: refCycle},
	"ref-external":           {run: refExternal},
	"allof-ref":              {run: allOfRef},
	"pattern-features":       {needs: needs{keywords: true}, run: patternFeatures},
	"property-names":         {needs: needs{pattern: true}, run: propertyNames},
}

// at is the tool-relative pointer of a schema location, extended by keys.
func at(loc string, keys ...string) string {
	p := schemaPointer + loc
	for _, k := range keys {
		p = jsonvalue.PointerAppend(p, k)
	}
	return p
}

func rootTypeObject(t *tool, c *Constraint, _ *Profile, v *violations) {
	switch {
	case !t.present:
		v.add(c, schemaPointer, "no inputSchema", false)
	case t.root == nil:
		v.add(c, schemaPointer, "the inputSchema is not a schema object", false)
	case t.root["type"] == nil:
		v.add(c, schemaPointer, "type is absent", false)
	case t.root["type"] != "object":
		v.add(c, at("", "type"), `type is not "object"`, false)
	}
}

func rootNot(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, k := range c.Params.Keywords {
		if _, ok := t.root[k]; ok {
			v.add(c, at("", k), k+" at the root", false)
		}
	}
}

// rootIsObject: the root declares type "object" (other root problems are
// root-type-object's).
func (t *tool) rootIsObject() bool { return t.root != nil && t.root["type"] == "object" }

func rootProperties(t *tool, c *Constraint, _ *Profile, v *violations) {
	if _, ok := t.root["properties"]; t.rootIsObject() && !ok {
		v.add(c, schemaPointer, "properties is absent", false)
	}
}

func rootPropertiesFilled(t *tool, c *Constraint, _ *Profile, v *violations) {
	if !t.rootIsObject() {
		return
	}
	if props, _ := t.root["properties"].(map[string]any); len(props) == 0 {
		v.add(c, schemaPointer, "the object declares no property", false)
	}
}

func validSchema(t *tool, c *Constraint, _ *Profile, v *violations) {
	var ce *jsonschema.CompileError
	switch {
	case t.compileErr == nil, errors.Is(t.compileErr, jsonschema.ErrRemoteRef):
	case errors.Is(t.compileErr, jsonschema.ErrBudget):
		v.add(c, schemaPointer, "whether the schema compiles was not established (work budget)", true)
	case errors.As(t.compileErr, &ce):
		v.add(c, schemaPointer, ce.Msg, false)
	default:
		v.add(c, schemaPointer, "the schema does not compile", false)
	}
}

func nameCheck(t *tool, c *Constraint, p *Profile, v *violations) {
	re := p.names[c.ID]
	n := len(t.name)
	switch {
	case n == 0:
		v.add(c, "/name", "the name is empty", false)
	case !re.MatchString(t.name):
		v.add(c, "/name", "the name uses a character the rule does not allow", false)
	case n > c.Params.Limit:
		v.add(c, "/name", fmt.Sprintf("the name is %d characters long", n), false)
	case c.Params.Over > 0 && n > c.Params.Over:
		v.add(c, "/name", fmt.Sprintf("the name is %d characters long", n), true)
	}
}

func arrayItems(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		if n.obj != nil && typeIncludes(n.obj, "array") {
			if _, ok := n.obj["items"]; !ok {
				v.add(c, at(n.loc), "an array schema without items", false)
			}
		}
	}
}

// valueKeywords are the keywords whose subschemas describe a value the
// model writes, so they must say what it is.
var valueKeywords = []string{"properties", "items", "prefixItems", "anyOf", "oneOf", "$defs", "definitions"}

func typeKey(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		if n.loc == "" || !slices.Contains(valueKeywords, n.kw) {
			continue
		}
		if n.obj == nil {
			v.add(c, at(n.loc), "a boolean schema", false)
			continue
		}
		// oneOf is graded by a constraint of its own (and a converter
		// turns it into anyOf).
		if hasAny(n.obj, "type", "anyOf", "oneOf", "$ref") {
			continue
		}
		// The examples seen are of {} and {"description": …}; a node that
		// still pins its value with enum or const may be taken.
		v.add(c, at(n.loc), "no type, anyOf or $ref", hasAny(n.obj, "enum", "const"))
	}
}

func keywordsForbidden(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		for _, k := range c.Params.Keywords {
			if _, ok := n.obj[k]; ok {
				v.add(c, at(n.loc, k), "uses "+k, false)
			}
		}
	}
}

func keywordsAllowed(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		for _, k := range sortedKeys(n.obj) {
			if !slices.Contains(c.Params.Keywords, k) {
				v.add(c, at(n.loc, k), "a keyword outside the supported set", false)
			}
		}
	}
}

// isObject: the node describes an object (type "object", or properties
// without a type).
func isObject(m map[string]any) bool {
	if m == nil {
		return false
	}
	if _, typed := m["type"]; typed {
		return typeIncludes(m, "object")
	}
	_, ok := m["properties"]
	return ok
}

func additionalPropertiesFalse(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		if !isObject(n.obj) {
			continue
		}
		switch ap, ok := n.obj["additionalProperties"]; {
		case !ok:
			v.add(c, at(n.loc), "additionalProperties is absent", false)
		case ap != false:
			// A converter that closes objects refuses to close one the
			// schema declares open.
			v.addUnrepairable(c, at(n.loc, "additionalProperties"), "additionalProperties is not false")
		}
	}
}

func allRequired(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		props, _ := n.obj["properties"].(map[string]any)
		req := stringSet(n.obj["required"])
		for _, name := range sortedKeys(props) {
			if !req[name] {
				v.add(c, at(n.loc, "properties", name), "a property not listed in required", false)
			}
		}
	}
}

func requiredDefined(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		req, _ := n.obj["required"].([]any)
		props, _ := n.obj["properties"].(map[string]any)
		for i, r := range req {
			if name, ok := r.(string); ok {
				if _, defined := props[name]; !defined {
					v.add(c, at(n.loc, "required", fmt.Sprint(i)), "required names a property the object does not define", false)
				}
			}
		}
	}
}

// knownFormats are the format names a report may repeat: those of JSON
// Schema 2020-12 and of OpenAPI. Any other value is server text and is not
// repeated.
var knownFormats = []string{"date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
	"ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer",
	"relative-json-pointer", "regex", "int32", "int64", "float", "double", "byte", "binary", "password", "enum", "url"}

func formatAllowed(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		f, ok := n.obj["format"].(string)
		if !ok || slices.Contains(c.Params.Values, f) {
			continue
		}
		detail := "a format outside JSON Schema's and OpenAPI's"
		if slices.Contains(knownFormats, f) {
			detail = fmt.Sprintf("format %q", f)
		}
		v.add(c, at(n.loc, "format"), detail, false)
	}
}

func typeAllowed(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		tv, ok := n.obj["type"]
		if !ok {
			continue
		}
		s, isString := tv.(string)
		switch {
		case !isString:
			v.add(c, at(n.loc, "type"), "type is not a single type name", false)
		case !slices.ContainsFunc(c.Params.Values, func(a string) bool { return strings.EqualFold(a, s) }):
			v.add(c, at(n.loc, "type"), "an unsupported type name", false)
		}
	}
}

func enumPrimitive(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		vals, _ := n.obj["enum"].([]any)
		for i, e := range vals {
			switch e.(type) {
			case map[string]any, []any:
				v.add(c, at(n.loc, "enum", fmt.Sprint(i)), "an object or array enum value", false)
			}
		}
	}
}

func enumStrings(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		vals, _ := n.obj["enum"].([]any)
		for i, e := range vals {
			if _, ok := e.(string); !ok {
				v.add(c, at(n.loc, "enum", fmt.Sprint(i)), "a enum value that is not a string", false)
			}
		}
	}
}

func minItems(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		if m, ok := jsonvalue.Number(n.obj["minItems"]); ok && m > float64(c.Params.Limit) {
			v.add(c, at(n.loc, "minItems"), fmt.Sprintf("minItems above %d", c.Params.Limit), false)
		}
	}
}

func nestingDepth(t *tool, c *Constraint, _ *Profile, v *violations) {
	switch {
	case t.levels > c.Params.Limit:
		v.add(c, at(t.levelsAt), fmt.Sprintf("%d levels of object nesting", t.levels), false)
	case !t.resolvedComplete:
		v.add(c, schemaPointer, "nesting not established: the schema expands past the walk budget", true)
	}
}

func propertyCount(t *tool, c *Constraint, _ *Profile, v *violations) {
	n := 0
	for _, nd := range t.nodes {
		props, _ := nd.obj["properties"].(map[string]any)
		n += len(props)
	}
	if n > c.Params.Limit {
		v.add(c, schemaPointer, fmt.Sprintf("%d properties in all", n), false)
	}
}

func stringSize(t *tool, c *Constraint, _ *Profile, v *violations) {
	n := 0
	for _, nd := range t.nodes {
		for _, k := range []string{"properties", "$defs", "definitions"} {
			m, _ := nd.obj[k].(map[string]any)
			for name := range m {
				n += len(name)
			}
		}
		vals, _ := nd.obj["enum"].([]any)
		for _, e := range vals {
			if s, ok := e.(string); ok {
				n += len(s)
			}
		}
		if s, ok := nd.obj["const"].(string); ok {
			n += len(s)
		}
	}
	if n > c.Params.Limit {
		v.add(c, schemaPointer, fmt.Sprintf("%d characters of names and values", n), false)
	}
}

func enumCount(t *tool, c *Constraint, _ *Profile, v *violations) {
	n := 0
	for _, nd := range t.nodes {
		vals, _ := nd.obj["enum"].([]any)
		n += len(vals)
	}
	if n > c.Params.Limit {
		v.add(c, schemaPointer, fmt.Sprintf("%d enum values in all", n), false)
	}
}

func enumStringSize(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, nd := range t.nodes {
		vals, _ := nd.obj["enum"].([]any)
		if len(vals) <= c.Params.Over {
			continue
		}
		n, all := 0, true
		for _, e := range vals {
			s, ok := e.(string)
			all = all && ok
			n += len(s)
		}
		if all && n > c.Params.Limit {
			v.add(c, at(nd.loc, "enum"), fmt.Sprintf("%d string values of %d characters in all", len(vals), n), false)
		}
	}
}

// properties calls fn for every property of every object node, with
// whether its object requires it.
func (t *tool) properties(fn func(n node, name string, schema any, required bool)) {
	for _, nd := range t.nodes {
		props, _ := nd.obj["properties"].(map[string]any)
		req := stringSet(nd.obj["required"])
		for _, name := range sortedKeys(props) {
			fn(nd, name, props[name], req[name])
		}
	}
}

func optionalCount(t *tool, c *Constraint, _ *Profile, v *violations) {
	n := 0
	t.properties(func(_ node, _ string, _ any, required bool) {
		if !required {
			n++
		}
	})
	if n > c.Params.Limit {
		v.add(c, schemaPointer, fmt.Sprintf("%d optional properties", n), false)
	}
}

func unionCount(t *tool, c *Constraint, _ *Profile, v *violations) {
	n := 0
	t.properties(func(_ node, _ string, s any, _ bool) {
		m, _ := s.(map[string]any)
		types, _ := m["type"].([]any)
		if _, any := m["anyOf"]; any || len(types) > 1 {
			n++
		}
	})
	if n > c.Params.Limit {
		v.add(c, schemaPointer, fmt.Sprintf("%d properties with a union type", n), false)
	}
}

func refCycle(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, r := range t.refs {
		if r.Cycle {
			v.add(c, at(r.Pointer, r.Keyword), "a recursive reference", false)
		}
	}
	if !t.resolvedComplete {
		v.add(c, schemaPointer, "recursion not established: the schema expands past the walk budget", true)
	}
}

func refExternal(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		for _, k := range []string{"$ref", "$dynamicRef", "$recursiveRef"} {
			target, ok := n.obj[k].(string)
			if !ok {
				continue
			}
			var resolved bool
			if k == "$ref" {
				_, _, resolved = jsonschema.ResolveRef(t.doc, target)
			} else {
				_, _, resolved = jsonschema.ResolveDynamicRef(t.doc, target)
			}
			if !resolved {
				v.add(c, at(n.loc, k), "a reference that does not resolve within the schema", false)
			}
		}
	}
}

func allOfRef(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		if n.kw != "allOf" || n.obj == nil {
			continue
		}
		if _, ok := n.obj["$ref"]; ok {
			v.add(c, at(n.loc, "$ref"), "allOf with a $ref branch", false)
		}
	}
}

// patternFeatures: Params.Keywords names the features refused:
// "lookaround", "backreference", "word-boundary".
func patternFeatures(t *tool, c *Constraint, _ *Profile, v *violations) {
	for _, n := range t.nodes {
		s, ok := n.obj["pattern"].(string)
		if !ok {
			continue
		}
		f := jsonschema.PatternFeaturesOf(s)
		for _, feat := range c.Params.Keywords {
			if feat == "lookaround" && f.Lookaround || feat == "backreference" && f.Backreference ||
				feat == "word-boundary" && f.WordBoundary {
				v.add(c, at(n.loc, "pattern"), "a pattern using "+feat, false)
			}
		}
	}
}

func propertyNames(t *tool, c *Constraint, p *Profile, v *violations) {
	if t.root == nil {
		return
	}
	re := p.names[c.ID]
	props, _ := t.root["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		if !re.MatchString(name) {
			v.add(c, at("", "properties", name), "a parameter name the rule does not allow", false)
		}
	}
}

func typeIncludes(m map[string]any, want string) bool {
	switch t := m["type"].(type) {
	case string:
		return t == want
	case []any:
		return slices.Contains(t, any(want))
	}
	return false
}

func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	arr, _ := v.([]any)
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out[s] = true
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
