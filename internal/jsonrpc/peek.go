package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind classifies a JSON-RPC frame.
type Kind int

// Frame kinds.
const (
	KindInvalid Kind = iota
	KindRequest
	KindNotification
	KindResponse
	KindError
	KindBatch
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	case KindError:
		return "error"
	case KindBatch:
		return "batch"
	}
	return "invalid"
}

// Peek is what a cheap scan of a frame learns without decoding it: enough to
// route, correlate and target faults.
type Peek struct {
	Kind   Kind
	ID     json.RawMessage // raw bytes of "id", nil when absent
	Method string
	// Tool is params.name of a tools/call request (or prompts/get), when present.
	Tool string
	// Version is the "jsonrpc" member's value.
	Version string
	// Ambiguous is set when parsers could read the frame differently: two
	// members of the frame (or of a tools/call's or prompts/get's params)
	// whose names are equal, or equal but for case. JavaScript and Python
	// keep the last of two equal names, as the peek does; encoding/json
	// also matches names regardless of case, so {"name":…,"Name":…} names
	// one tool to a Go server and another to a JavaScript one. PeekFrame
	// judges the envelope only; PeekFrameStrict the call's params too.
	Ambiguous bool
}

// ErrNotObject is returned by PeekFrame when a frame is not a JSON object or array.
var ErrNotObject = errors.New("jsonrpc: frame is not a JSON object")

// PeekFrame scans the top level of a frame. It validates only as much syntax as
// it walks over; a frame that peeks cleanly may still fail a full decode.
// Of a call's params it reads up to the first "name" member, which is
// what routing and fault targeting need and all that the hot path pays
// for; see PeekFrameStrict.
func PeekFrame(b []byte) (Peek, error) { return peekFrame(b, false) }

// PeekFrameStrict is PeekFrame for a reader that must see what the
// receiver will (the guard): it walks a call's params whole, takes the
// last "name", as receiving parsers do, and counts a repeated or
// case-variant "name" or "arguments" as Ambiguous.
func PeekFrameStrict(b []byte) (Peek, error) { return peekFrame(b, true) }

func peekFrame(b []byte, strict bool) (Peek, error) {
	var p Peek
	s := scanner{b: b}
	s.ws()
	if s.i >= len(b) {
		return p, ErrNotObject
	}
	if b[s.i] == '[' {
		p.Kind = KindBatch
		return p, nil
	}
	if b[s.i] != '{' {
		return p, ErrNotObject
	}
	var hasResult, hasError bool
	var params []byte
	var seen uint8 // envelope members met, by index in envelope
	err := s.members(func(key string, start, end int) bool {
		val := b[start:end]
		if repeats(key, envelope, &seen) {
			p.Ambiguous = true
		}
		switch key {
		case "id":
			if string(val) != "null" {
				p.ID = json.RawMessage(val)
			}
		case "method":
			p.Method = unquote(val)
		case "jsonrpc":
			p.Version = unquote(val)
		case "result":
			hasResult = true
		case "error":
			hasError = true
		case "params":
			params = val
		}
		return true
	})
	if err != nil {
		return p, err
	}
	switch {
	case p.Method != "" && p.ID != nil:
		p.Kind = KindRequest
	case p.Method != "":
		p.Kind = KindNotification
	case hasError:
		p.Kind = KindError
	case hasResult:
		p.Kind = KindResponse
	}
	if params != nil && (p.Method == "tools/call" || p.Method == "prompts/get") {
		var dup bool
		p.Tool, dup = peekName(params, strict)
		p.Ambiguous = p.Ambiguous || dup
	}
	return p, nil
}

// foldSet holds the member names of one object seen so far, folded.
type foldSet map[string]struct{}

// add records name and reports whether an earlier name equals it, or
// equals it but for case (as encoding/json matches names).
func (f *foldSet) add(name string) bool {
	if *f == nil {
		*f = foldSet{}
	}
	k := foldKey(name)
	if _, dup := (*f)[k]; dup {
		return true
	}
	(*f)[k] = struct{}{}
	return false
}

// foldKey maps name to one representative of the names that
// strings.EqualFold holds equal to it: every rune becomes the least rune of
// its simple case-folding orbit.
func foldKey(name string) string {
	ascii := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= utf8.RuneSelf || ('a' <= c && c <= 'z') {
			ascii = false
			break
		}
	}
	if ascii {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// envelope and callNames are the member names the peek reads, of a frame
// and of a call's params.
var (
	envelope  = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	callNames = []string{"name", "arguments"}
)

// repeats reports whether name is one of names met before (seen holds
// a bit per name), or differs from one of names only in case: encoding/json
// would read it as that member, the peek (and JavaScript and Python) would
// not.
func repeats(name string, names []string, seen *uint8) bool {
	for i, n := range names {
		if name == n {
			dup := *seen&(1<<i) != 0
			*seen |= 1 << i
			return dup
		}
	}
	// The names are lower-case ASCII: a name of lower-case ASCII alone
	// that is none of them folds to none of them.
	folds := false
	for i := 0; i < len(name) && !folds; i++ {
		folds = name[i] >= utf8.RuneSelf || 'A' <= name[i] && name[i] <= 'Z'
	}
	if !folds {
		return false
	}
	for _, n := range names {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// peekName returns params.name: the first one, or when strict the last
// one (as receiving parsers keep) and whether params holds equal or
// case-equal call member names.
func peekName(params []byte, strict bool) (name string, ambiguous bool) {
	s := scanner{b: params}
	s.ws()
	if s.i >= len(params) || params[s.i] != '{' {
		return "", false
	}
	var seen uint8
	first := false
	err := s.members(func(key string, start, end int) bool {
		if repeats(key, callNames, &seen) {
			ambiguous = true
		}
		if key == "name" {
			name = unquote(params[start:end])
			first = !strict
		}
		return !first
	})
	switch {
	case first:
		return name, false
	case err != nil && err != errUnclosed:
		return "", ambiguous
	}
	return name, ambiguous
}

func unquote(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	// Fast path: plain ASCII, or no escapes and valid UTF-8 (encoding/json
	// replaces bad bytes, so those take the slow path).
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' || c >= utf8.RuneSelf {
			if c != '\\' && bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
				return string(inner)
			}
			return unquoteSlow(v)
		}
	}
	return string(inner)
}

// unquoteSlow decodes a JSON string as encoding/json does ("" if invalid).
func unquoteSlow(v []byte) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

var (
	errTrunc  = errors.New("jsonrpc: truncated frame")
	errSyntax = errors.New("jsonrpc: syntax error")
	// errUnclosed is the truncation of an object that ends before its
	// closing brace, told apart from one inside a member.
	errUnclosed = fmt.Errorf("%w", errTrunc)
)

type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() { s.i = skipWS(s.b, s.i) }

// members walks the members of the object whose '{' s stands at, as the
// peek reads an object: commas may stand anywhere between members. It
// calls fn with each member's key and the bounds of its value in s.b; fn
// returns false to stop the walk there. It returns nil at the closing '}'
// (or where fn stopped), errUnclosed when the input ends before the brace,
// and the error of a member that does not scan.
func (s *scanner) members(fn func(key string, start, end int) bool) error {
	s.i++ // the '{'
	for {
		s.ws()
		if s.i >= len(s.b) {
			return errUnclosed
		}
		if s.b[s.i] == '}' {
			s.i++
			return nil
		}
		if s.b[s.i] == ',' {
			s.i++
			continue
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return errSyntax
		}
		s.i++
		s.ws()
		start := s.i
		if err := s.skip(0); err != nil {
			return err
		}
		if !fn(key, start, s.i) {
			return nil
		}
	}
}

func (s *scanner) str() (string, error) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", errSyntax
	}
	start := s.i
	if err := s.skipString(); err != nil {
		return "", err
	}
	return unquote(s.b[start:s.i]), nil
}

func (s *scanner) skipString() error {
	s.i++ // opening quote
	for {
		// Jump to the next quote (vectorised), then look back: the quote is
		// escaped when an odd run of backslashes precedes it.
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			s.i = len(s.b)
			return errTrunc
		}
		q := s.i + j
		bs := 0
		for k := q - 1; k >= s.i && s.b[k] == '\\'; k-- {
			bs++
		}
		s.i = q + 1
		if bs%2 == 0 {
			return nil
		}
	}
}

// skip advances over one JSON value. Nested containers are walked
// iteratively by bracket counting.
func (s *scanner) skip(_ int) error {
	if s.i >= len(s.b) {
		return errTrunc
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{' || c == '[':
		depth := 0
		for s.i < len(s.b) {
			// Jump to the next byte that matters outside strings.
			j := bytes.IndexAny(s.b[s.i:], `"{}[]`)
			if j < 0 {
				s.i = len(s.b)
				break
			}
			s.i += j
			switch s.b[s.i] {
			case '"':
				if err := s.skipString(); err != nil {
					return err
				}
				continue
			case '{', '[':
				// Iterative bracket counting: any depth is walked without
				// recursion, so a hostile frame cannot exhaust the stack.
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return nil
				}
			}
			s.i++
		}
		return errTrunc
	default:
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if s.i == start {
					return errSyntax
				}
				return nil
			}
			s.i++
		}
		if s.i == start {
			return errTrunc
		}
		return nil
	}
}

// FoldCollision reports a member name of the JSON object obj that equals
// an earlier member's name, or equals it but for case (see
// [Peek.Ambiguous]); ok is false when there is none or obj is not an
// object. Only obj's own members are compared, not those of nested objects.
func FoldCollision(obj []byte) (name string, ok bool) {
	var keys foldSet
	err := eachItem(obj, '{', func(key string, _ []byte) {
		if !ok && keys.add(key) {
			name, ok = key, true
		}
	})
	if err != nil {
		return "", false
	}
	return name, ok
}

// IDSpan returns where the value of the top-level "id" member of frame, a
// JSON object, lies: frame[start:end] (the last such member, as receiving
// parsers read it). ok is false when frame is not an object with an id.
// A caller replaces the id by writing frame[:start], the new id, then
// frame[end:].
func IDSpan(frame []byte) (start, end int, ok bool) {
	sp, ok := MemberSpan(frame, "id")
	return sp.Start, sp.End, ok
}

// Span is where a member's value lies in a frame: frame[Start:End].
type Span struct {
	Start, End int
	// Ambiguous is set when an object on the path holds two members
	// named as the path's name there, or so named but for case: parsers
	// may read another one than the span's (see [Peek.Ambiguous]).
	Ambiguous bool
}

// MemberSpan returns where the value at path (member names, from frame's
// top-level object down) lies: of two members of one name, the last, as
// receiving parsers keep. ok is false when a value on the path is not an
// object, or a member is missing (Ambiguous may still be set).
func MemberSpan(frame []byte, path ...string) (Span, bool) {
	var sp Span
	lo, hi := 0, len(frame)
	for _, name := range path {
		s := scanner{b: frame[:hi], i: lo}
		s.ws()
		if s.i >= hi || frame[s.i] != '{' {
			return sp, false
		}
		start, end, named := -1, -1, 0
		err := s.members(func(key string, vs, ve int) bool {
			switch {
			case key == name:
				start, end = vs, ve
				named++
			case strings.EqualFold(key, name):
				named++
			}
			return true
		})
		sp.Ambiguous = sp.Ambiguous || named > 1
		if err != nil || start < 0 {
			return sp, false
		}
		lo, hi = start, end
	}
	sp.Start, sp.End = lo, hi
	return sp, true
}
