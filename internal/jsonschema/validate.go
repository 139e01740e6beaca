package jsonschema

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Violation is one reason an instance fails a schema.
type Violation struct {
	// Pointer is the JSON pointer of the offending value in the instance.
	Pointer string `json:"pointer"`
	// Keyword is the failing schema keyword: "type", "enum", "format",
	// "required", "anyOf", …
	Keyword string `json:"keyword"`
	// Message describes the failure using schema facts only (types,
	// bounds, property names, format names). It never quotes the
	// instance's values: "expected array, got string".
	Message string `json:"message"`
}

// ValidationError is returned by Schema.Validate for an instance that does
// not conform. Its text is built from the Violations and carries no instance
// values.
type ValidationError struct {
	Violations []Violation
}

// Error names the first violation (pointer and message) and how many
// more there are.
func (e *ValidationError) Error() string {
	if len(e.Violations) == 0 {
		return "schema: instance does not conform"
	}
	v := e.Violations[0]
	ptr := v.Pointer
	if ptr == "" {
		ptr = "(root)"
	}
	msg := fmt.Sprintf("schema: %s: %s", ptr, v.Message)
	if n := len(e.Violations) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// Validate checks an instance (as decoded by DecodeJSON: json.Number
// numbers, map[string]any objects, []any arrays). It returns nil when the
// instance conforms, a *ValidationError when it does not, and another error
// if the instance is outside the JSON data model.
func (s *Schema) Validate(instance any) error {
	err := s.sch.Validate(instance)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return &ValidationError{Violations: violationsOf(ve)}
	}
	return fmt.Errorf("schema: validate: %w", err)
}

// Violations returns the reasons instance fails the schema (nil when it
// conforms), sorted by pointer, keyword and message, without duplicates.
// A failed anyOf/oneOf is reported once at the value (the per-branch
// reasons are not listed, since it is not known which branch was meant).
func (s *Schema) Violations(instance any) []Violation {
	err := s.Validate(instance)
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Violations
	}
	return []Violation{{Keyword: "type", Message: "value is outside the JSON data model"}}
}

func violationsOf(e *jsonschema.ValidationError) []Violation {
	var out []Violation
	collectViolations(e, &out, 0)
	slices.SortFunc(out, func(a, b Violation) int {
		return cmp.Or(strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Keyword, b.Keyword), strings.Compare(a.Message, b.Message))
	})
	out = slices.Compact(out)
	if len(out) == 0 {
		out = []Violation{{Keyword: "", Message: "validation failed"}}
	}
	return out
}

func ptrOf(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(jsonvalue.EscapeToken(t))
	}
	return b.String()
}

func collectViolations(e *jsonschema.ValidationError, out *[]Violation, depth int) {
	if depth > jsonvalue.MaxJSONDepth {
		return
	}
	ptr := ptrOf(e.InstanceLocation)
	add := func(p, kw, msg string) { *out = append(*out, Violation{Pointer: p, Keyword: kw, Message: msg}) }
	descend := func() {
		for _, c := range e.Causes {
			collectViolations(c, out, depth+1)
		}
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Group, *kind.Schema, *kind.Reference, *kind.AllOf:
		descend()
	case *kind.Type:
		add(ptr, "type", fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got))
	case *kind.Enum:
		add(ptr, "enum", fmt.Sprintf("value is not one of the %d allowed values", len(k.Want)))
	case *kind.Const:
		add(ptr, "const", "value is not the required constant")
	case *kind.Format:
		add(ptr, "format", fmt.Sprintf("value is not a valid %s", k.Want))
	case *kind.Required:
		for _, m := range k.Missing {
			add(ptr, "required", fmt.Sprintf("missing required property %q", m))
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			add(jsonvalue.PointerAppend(ptr, p), "additionalProperties", "property is not allowed")
		}
	case *kind.PropertyNames:
		add(jsonvalue.PointerAppend(ptr, k.Property), "propertyNames", "property name is not allowed")
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			add(ptr, "dependentRequired", fmt.Sprintf("property %q requires property %q", k.Prop, m))
		}
	case *kind.Dependency:
		for _, m := range k.Missing {
			add(ptr, "dependencies", fmt.Sprintf("property %q requires property %q", k.Prop, m))
		}
		descend()
	case *kind.MinProperties:
		add(ptr, "minProperties", fmt.Sprintf("object has %d properties, fewer than %d", k.Got, k.Want))
	case *kind.MaxProperties:
		add(ptr, "maxProperties", fmt.Sprintf("object has %d properties, more than %d", k.Got, k.Want))
	case *kind.MinItems:
		add(ptr, "minItems", fmt.Sprintf("array has %d items, fewer than %d", k.Got, k.Want))
	case *kind.MaxItems:
		add(ptr, "maxItems", fmt.Sprintf("array has %d items, more than %d", k.Got, k.Want))
	case *kind.AdditionalItems:
		add(ptr, "additionalItems", fmt.Sprintf("array has %d items beyond those allowed", k.Count))
	case *kind.UniqueItems:
		add(ptr, "uniqueItems", fmt.Sprintf("items %d and %d are equal", k.Duplicates[0], k.Duplicates[1]))
	case *kind.Contains:
		add(ptr, "contains", "no item matches the contains schema")
	case *kind.MinContains:
		add(ptr, "minContains", fmt.Sprintf("%d items match contains, fewer than %d", len(k.Got), k.Want))
	case *kind.MaxContains:
		add(ptr, "maxContains", fmt.Sprintf("%d items match contains, more than %d", len(k.Got), k.Want))
	case *kind.MinLength:
		add(ptr, "minLength", fmt.Sprintf("string length %d is below %d", k.Got, k.Want))
	case *kind.MaxLength:
		add(ptr, "maxLength", fmt.Sprintf("string length %d is above %d", k.Got, k.Want))
	case *kind.Pattern:
		add(ptr, "pattern", fmt.Sprintf("value does not match pattern %q", k.Want))
	case *kind.Minimum:
		add(ptr, "minimum", fmt.Sprintf("value is below the minimum %s", ratText(k.Want)))
	case *kind.Maximum:
		add(ptr, "maximum", fmt.Sprintf("value is above the maximum %s", ratText(k.Want)))
	case *kind.ExclusiveMinimum:
		add(ptr, "exclusiveMinimum", fmt.Sprintf("value is not above %s", ratText(k.Want)))
	case *kind.ExclusiveMaximum:
		add(ptr, "exclusiveMaximum", fmt.Sprintf("value is not below %s", ratText(k.Want)))
	case *kind.MultipleOf:
		add(ptr, "multipleOf", fmt.Sprintf("value is not a multiple of %s", ratText(k.Want)))
	case *kind.FalseSchema:
		add(ptr, "false", "no value is allowed here")
	case *kind.Not:
		add(ptr, "not", "value matches a schema it must not match")
	case *kind.AnyOf:
		add(ptr, "anyOf", "value matches none of the alternatives")
	case *kind.OneOf:
		if len(k.Subschemas) >= 2 {
			add(ptr, "oneOf", fmt.Sprintf("value matches more than one alternative (%d and %d)", k.Subschemas[0], k.Subschemas[1]))
		} else {
			add(ptr, "oneOf", "value matches none of the alternatives")
		}
	case *kind.RefCycle:
		add(ptr, "$ref", "reference cycle in the schema")
	case *kind.InvalidJsonValue:
		add(ptr, "type", "value is outside the JSON data model")
	case *kind.ContentEncoding:
		add(ptr, "contentEncoding", fmt.Sprintf("value is not valid %s", k.Want))
	case *kind.ContentMediaType:
		add(ptr, "contentMediaType", fmt.Sprintf("value is not valid %s", k.Want))
	case *kind.ContentSchema:
		add(ptr, "contentSchema", "content does not match contentSchema")
	default:
		if len(e.Causes) > 0 {
			descend()
			return
		}
		kw := ""
		if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
			kw = p[len(p)-1]
		}
		add(ptr, kw, "validation failed")
	}
}

// ratText renders a schema bound in decimal (exact when it has at most 30
// fractional digits, otherwise as a fraction); very long values are shown
// in float64 precision.
func ratText(r *big.Rat) string {
	s := r.RatString()
	if !r.IsInt() {
		for prec := 1; prec <= 30; prec++ {
			f := r.FloatString(prec)
			if q, ok := new(big.Rat).SetString(f); ok && q.Cmp(r) == 0 {
				s = f
				break
			}
		}
	}
	if len(s) > 40 {
		f, _ := r.Float64()
		s = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return s
}
