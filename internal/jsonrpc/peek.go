package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
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
}

// ErrNotObject is returned by PeekFrame when a frame is not a JSON object or array.
var ErrNotObject = errors.New("jsonrpc: frame is not a JSON object")

// PeekFrame scans the top level of a frame. It validates only as much syntax as
// it walks over; a frame that peeks cleanly may still fail a full decode.
func PeekFrame(b []byte) (Peek, error) {
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
	s.i++
	var hasResult, hasError bool
	var params []byte
	for {
		s.ws()
		if s.i >= len(b) {
			return p, errTrunc
		}
		if b[s.i] == '}' {
			break
		}
		if b[s.i] == ',' {
			s.i++
			continue
		}
		key, err := s.str()
		if err != nil {
			return p, err
		}
		s.ws()
		if s.i >= len(b) || b[s.i] != ':' {
			return p, errSyntax
		}
		s.i++
		s.ws()
		start := s.i
		if err := s.skip(0); err != nil {
			return p, err
		}
		val := b[start:s.i]
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
		p.Tool = peekName(params)
	}
	return p, nil
}

func peekName(params []byte) string {
	s := scanner{b: params}
	s.ws()
	if s.i >= len(params) || params[s.i] != '{' {
		return ""
	}
	s.i++
	for {
		s.ws()
		if s.i >= len(params) || params[s.i] == '}' {
			return ""
		}
		if params[s.i] == ',' {
			s.i++
			continue
		}
		key, err := s.str()
		if err != nil {
			return ""
		}
		s.ws()
		if s.i >= len(params) || params[s.i] != ':' {
			return ""
		}
		s.i++
		s.ws()
		start := s.i
		if s.skip(0) != nil {
			return ""
		}
		if key == "name" {
			return unquote(params[start:s.i])
		}
	}
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
)

type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() { s.i = skipWS(s.b, s.i) }

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
