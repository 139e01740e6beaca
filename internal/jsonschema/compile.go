package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Defaults for Options.
const (
	DefaultMaxDepth = 256
	DefaultMaxBytes = 4 << 20
)

// baseURL is the location the document is registered under. The ".invalid"
// top-level domain cannot resolve, and nothing is ever fetched anyway.
const baseURL = "https://mcpdrill.invalid/schema.json"

var (
	// ErrRemoteRef reports a reference (or "$schema") that is not local to
	// the document. Remote documents are never fetched.
	ErrRemoteRef = errors.New("schema: remote reference not fetched")
	// ErrUnsupportedDialect reports a "$schema" URI that is not one of the
	// known JSON Schema drafts.
	ErrUnsupportedDialect = errors.New("schema: unsupported $schema dialect")
	// ErrTooLarge reports a schema document over Options.MaxBytes.
	ErrTooLarge = errors.New("schema: document too large")
	// ErrInvalidSchema is wrapped by every compile failure that is the
	// document's fault (as opposed to a limit).
	ErrInvalidSchema = errors.New("schema: invalid schema")
)

// Options tune CompileOpts. The zero value means: format not asserted,
// default limits.
type Options struct {
	// AssertFormat makes "format" an assertion (a value that is not a valid
	// date-time, uri, email… fails). Compile sets it.
	AssertFormat bool
	// MaxDepth bounds the nesting of objects and arrays in the schema
	// document (JSON depth, not subschema depth). Default DefaultMaxDepth.
	MaxDepth int
	// MaxBytes bounds the size of the raw document. Default DefaultMaxBytes.
	MaxBytes int

	// meter, when set, is charged for every pattern match the validator
	// makes (synthesis and assessment compile with their budget's meter).
	meter *meter
}

func (o Options) withDefaults() Options {
	o.MaxDepth, o.MaxBytes = orDefault(o.MaxDepth, DefaultMaxDepth), orDefault(o.MaxBytes, DefaultMaxBytes)
	return o
}

// Schema is a compiled JSON Schema document.
type Schema struct {
	sch         *jsonschema.Schema
	doc         any
	draft       int
	opts        Options
	unsupported []string
}

// CompileError is a compile failure. Its message names locations in the
// schema (JSON pointers) and keywords, never schema or instance values. The
// underlying library error is available through errors.Unwrap for callers
// that need it locally; do not put it in reports.
type CompileError struct {
	Msg string
	err error
}

// Error returns the value-free message.
func (e *CompileError) Error() string { return "schema: " + e.Msg }

// Unwrap returns the sentinel and the underlying error.
func (e *CompileError) Unwrap() []error {
	if e.err == nil {
		return nil
	}
	return []error{e.err}
}

// Compile compiles a JSON Schema document with "format" asserted and default
// limits. The dialect comes from "$schema" (draft-04, -06, -07, 2019-09 or
// 2020-12); without it the document is read as 2020-12. Any reference that
// leaves the document is refused with ErrRemoteRef: nothing is fetched.
// Documents deeper than DefaultMaxDepth are refused with jsonvalue.ErrTooDeep, so a
// 10,000-deep schema fails fast; a "$ref" cycle compiles (it is legal) and
// is reported by the validator as a reference cycle instead of looping.
func Compile(raw json.RawMessage) (*Schema, error) {
	return CompileOpts(raw, Options{AssertFormat: true})
}

// CompileOpts is Compile with explicit options.
func CompileOpts(raw json.RawMessage, o Options) (*Schema, error) {
	o = o.withDefaults()
	if len(raw) > o.MaxBytes {
		return nil, &CompileError{Msg: fmt.Sprintf("document over %d bytes", o.MaxBytes), err: ErrTooLarge}
	}
	doc, err := jsonvalue.DecodeJSONDepth(raw, o.MaxDepth)
	if err != nil {
		if errors.Is(err, jsonvalue.ErrTooDeep) {
			return nil, &CompileError{Msg: fmt.Sprintf("document nested deeper than %d", o.MaxDepth), err: err}
		}
		return nil, &CompileError{Msg: "not valid JSON", err: errors.Join(ErrInvalidSchema, err)}
	}
	return compileDoc(doc, o)
}

// knownDialects maps the recognised "$schema" URIs (without a trailing
// '#') to draft versions.
var knownDialects = map[string]int{
	"json-schema.org/draft-04/schema":      4,
	"json-schema.org/draft-06/schema":      6,
	"json-schema.org/draft-07/schema":      7,
	"json-schema.org/draft/2019-09/schema": 2019,
	"json-schema.org/draft/2020-12/schema": 2020,
	"json-schema.org/schema":               2020,
}

// dialectOf returns the draft version named by the document's "$schema"
// (2020 when absent) and whether it is recognised.
func dialectOf(doc any) (int, bool) {
	m, ok := doc.(map[string]any)
	if !ok {
		return 2020, true
	}
	sv, present := m["$schema"]
	if !present {
		return 2020, true
	}
	s, ok := sv.(string)
	if !ok {
		return 0, false
	}
	s = strings.TrimSuffix(s, "#")
	s, ok1 := strings.CutPrefix(s, "https://")
	if !ok1 {
		var ok2 bool
		if s, ok2 = strings.CutPrefix(s, "http://"); !ok2 {
			return 0, false
		}
	}
	v, ok := knownDialects[s]
	return v, ok
}

type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) { return nil, ErrRemoteRef }

type permissiveRegexp string

func (p permissiveRegexp) String() string        { return string(p) }
func (permissiveRegexp) MatchString(string) bool { return true }

// compileDoc compiles an already decoded (and depth-checked) document.
func compileDoc(doc any, o Options) (*Schema, error) {
	draft, ok := dialectOf(doc)
	if !ok {
		return nil, &CompileError{Msg: "unsupported $schema dialect", err: errors.Join(ErrInvalidSchema, ErrUnsupportedDialect)}
	}
	rec := &patternRecorder{}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if o.AssertFormat {
		c.AssertFormat()
	}
	c.UseLoader(refuseLoader{})
	c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
		var (
			re  jsonschema.Regexp
			err error
		)
		if o.meter != nil {
			re, err = newMatcher(s, o.meter)
		} else {
			re, err = compileECMA(s)
		}
		if err == nil {
			return re, nil
		}
		if ecmaOnlySyntax(s) {
			rec.add(s)
			return permissiveRegexp(s), nil
		}
		return nil, err
	})
	if err := c.AddResource(baseURL, doc); err != nil {
		return nil, &CompileError{Msg: "cannot register document", err: errors.Join(ErrInvalidSchema, err)}
	}
	sch, err := c.Compile(baseURL)
	if err != nil {
		return nil, sanitizeCompileError(err)
	}
	return &Schema{sch: sch, doc: doc, draft: draft, opts: o, unsupported: rec.finish()}, nil
}

// patternRecorder collects unsupported patterns during compilation. The
// regexp engine is also called at validation time (format "regex"), possibly
// concurrently, so it is locked and stops recording once compilation ends.
type patternRecorder struct {
	mu   sync.Mutex
	list []string
	done bool
}

func (r *patternRecorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.list = append(r.list, s)
	}
}

func (r *patternRecorder) finish() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	slices.Sort(r.list)
	return slices.Compact(r.list)
}

// compileECMA compiles an ECMA-262 style pattern with Go's RE2 engine after
// translating the ECMA-only escapes it can: \uXXXX becomes \x{XXXX}.
func compileECMA(s string) (*regexp.Regexp, error) {
	return regexp.Compile(translateECMA(s))
}

func translateECMA(s string) string {
	if !strings.Contains(s, `\u`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) && isHex(s[i+2:i+6]) {
			b.WriteString(`\x{` + s[i+2:i+6] + `}`)
			i += 5
			continue
		}
		b.WriteByte(s[i])
		b.WriteByte(s[i+1])
		i++
	}
	return b.String()
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ecmaOnlySyntax reports whether a pattern RE2 refused uses ECMA-262
// features RE2 lacks (lookaround, backreferences). Such patterns are valid
// JSON Schema but cannot be checked here; they are accepted and not
// asserted, and listed by Schema.UnassertedPatterns.
func ecmaOnlySyntax(s string) bool {
	f := PatternFeaturesOf(s)
	return f.Lookaround || f.Backreference
}

// PatternFeatures says which regular-expression features a pattern uses
// that some engines lack.
type PatternFeatures struct {
	// Lookaround: (?=, (?!, (?<= or (?<!.
	Lookaround bool
	// Backreference: \1 to \9 or \k<name>.
	Backreference bool
	// WordBoundary: \b or \B outside a character class.
	WordBoundary bool
}

// PatternFeaturesOf scans an ECMA-262 pattern (escapes and character
// classes respected) for the features PatternFeatures names.
func PatternFeaturesOf(s string) PatternFeatures {
	var f PatternFeatures
	class := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			switch n := s[i+1]; {
			case n >= '1' && n <= '9':
				f.Backreference = true
			case n == 'k' && i+2 < len(s) && s[i+2] == '<':
				f.Backreference = true
			case (n == 'b' || n == 'B') && !class:
				f.WordBoundary = true
			}
			i++
		case class:
			if c == ']' {
				class = false
			}
		case c == '[':
			class = true
		case c == '(' && strings.HasPrefix(s[i:], "(?=") || strings.HasPrefix(s[i:], "(?!") ||
			strings.HasPrefix(s[i:], "(?<=") || strings.HasPrefix(s[i:], "(?<!"):
			f.Lookaround = true
		}
	}
	return f
}

// Doc returns the decoded schema document (do not modify it).
func (s *Schema) Doc() any { return s.doc }

// Draft returns the draft version the document is read as: 4, 6, 7, 2019 or
// 2020.
func (s *Schema) Draft() int { return s.draft }

// FormatAsserted reports whether "format" is an assertion in this schema.
func (s *Schema) FormatAsserted() bool { return s.opts.AssertFormat }

// UnassertedPatterns lists, sorted, the "pattern"/"patternProperties"
// regular expressions that use ECMA-262 syntax Go's engine lacks (lookaround,
// backreferences). They are treated as matching everything.
func (s *Schema) UnassertedPatterns() []string { return slices.Clone(s.unsupported) }

// sanitizeCompileError turns a library error into a CompileError whose text
// has pointers and keywords only.
func sanitizeCompileError(err error) error {
	ce := func(msg string) error {
		return &CompileError{Msg: msg, err: errors.Join(ErrInvalidSchema, err)}
	}
	if errors.Is(err, ErrRemoteRef) {
		return &CompileError{Msg: "non-local reference (remote documents are never fetched)", err: errors.Join(ErrInvalidSchema, ErrRemoteRef, err)}
	}
	var (
		sve *jsonschema.SchemaValidationError
		rxe *jsonschema.InvalidRegexError
		pnf *jsonschema.JSONPointerNotFoundError
		ipe *jsonschema.InvalidJsonPointerError
		anf *jsonschema.AnchorNotFoundError
		dup *jsonschema.DuplicateIDError
		dua *jsonschema.DuplicateAnchorError
		use *jsonschema.UnsupportedURLSchemeError
		lue *jsonschema.LoadURLError
		udr *jsonschema.UnsupportedDraftError
		pie *jsonschema.ParseIDError
		pae *jsonschema.ParseAnchorError
		pue *jsonschema.ParseURLError
		uve *jsonschema.UnsupportedVocabularyError
	)
	switch {
	case errors.As(err, &sve):
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			vs := violationsOf(ve)
			parts := make([]string, 0, 3)
			for i, v := range vs {
				if i == 3 {
					parts = append(parts, fmt.Sprintf("and %d more", len(vs)-3))
					break
				}
				parts = append(parts, fmt.Sprintf("at %q: %s (%s)", v.Pointer, v.Message, v.Keyword))
			}
			return ce("not a valid schema against its meta-schema: " + strings.Join(parts, "; "))
		}
		return ce("not a valid schema against its meta-schema")
	case errors.As(err, &rxe):
		return ce(fmt.Sprintf("invalid regular expression at %q", fragment(rxe.URL)))
	case errors.As(err, &pnf):
		return ce(fmt.Sprintf("$ref target %q not found", fragment(pnf.URL)))
	case errors.As(err, &ipe):
		return ce("malformed JSON pointer in $ref")
	case errors.As(err, &anf):
		return ce("$ref anchor not found")
	case errors.As(err, &dup), errors.As(err, &dua):
		return ce("duplicate $id or $anchor")
	case errors.As(err, &use), errors.As(err, &lue):
		return &CompileError{Msg: "non-local reference (remote documents are never fetched)", err: errors.Join(ErrInvalidSchema, ErrRemoteRef, err)}
	case errors.As(err, &udr):
		return &CompileError{Msg: "unsupported $schema dialect", err: errors.Join(ErrInvalidSchema, ErrUnsupportedDialect, err)}
	case errors.As(err, &pie), errors.As(err, &pae), errors.As(err, &pue):
		return ce("malformed $id, $anchor or reference URI")
	case errors.As(err, &uve):
		return ce("unsupported vocabulary")
	}
	return ce("does not compile")
}

// fragment returns the JSON pointer part of a library location URL.
func fragment(u string) string {
	if _, f, ok := strings.Cut(u, "#"); ok {
		return f
	}
	return ""
}
