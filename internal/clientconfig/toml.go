package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads TOML: the whole of Codex's config.toml, whose
// [mcp_servers.NAME] tables hold its MCP servers. It is a strict reader of
// TOML 1.0 (https://toml.io/en/v1.0.0) less nothing a Codex configuration
// uses: comments, bare, quoted and dotted keys, [table] and [[array of
// tables]] headers, basic, literal and multi-line strings, integers
// (decimal, hex, octal, binary), floats, booleans, arrays and inline
// tables. A date or a time is kept as its text (no key Codex reads holds
// one). What is not TOML is an error with its line: a key given twice, a
// table defined twice, a value of the wrong shape, a control character.
//
// The file is the user's own or a workspace's (.codex/config.toml), and a
// workspace's is untrusted input. Abuse list (tests in toml_test.go, and
// FuzzParseTOML):
//   - size: the caller reads the file with internal/inputfile's limit;
//   - depth: arrays and inline tables nested deeper than maxTOMLDepth are
//     refused, so no recursion runs away;
//   - a key or a table given twice (a reader that keeps the first would see
//     another server than one that keeps the last): refused;
//   - control characters, invalid UTF-8, a bad escape, an unterminated
//     string or array: refused with the line;
//   - numbers out of range: refused;
//   - time: every step reads forward, a date-time is matched within a
//     window of 64 bytes, and an array of tables forgets only its own
//     element's subtables, so a large file costs time in proportion to its
//     size (3.5 MB of 200,000 tables: 0.7 s).

// maxTOMLDepth bounds the nesting of arrays and inline tables, and the
// parts of a dotted key.
const maxTOMLDepth = 64

// tomlDoc is a parsed TOML document: the root table, and the line where
// each table was opened (its header, or the first key that made it),
// keyed by its dotted path (tomlPath).
type tomlDoc struct {
	root  map[string]any
	lines map[string]int
}

// tomlPath is the key of a table in tomlDoc.lines.
func tomlPath(keys []string) string { return strings.Join(keys, "\x00") }

// tomlTable records how a table came to be, for the redefinition rules.
type tomlTable struct {
	m map[string]any
	// header: opened by a [header]; dotted: made by a dotted key; inline:
	// an inline table (closed once written); implicit: made as the parent
	// of a header, which a later header may still define.
	header, dotted, inline, implicit bool
}

type tomlParser struct {
	src  []byte
	pos  int
	line int
	// meta says how each table (by tomlPath) was made.
	meta map[string]*tomlTable
	// aotSub lists, for each array of tables, the tables made under its
	// last element: a new element starts without them.
	aotSub map[string][]string
	doc    *tomlDoc
}

// parseTOML parses a TOML document.
func parseTOML(src []byte) (*tomlDoc, error) {
	if !utf8.Valid(src) {
		return nil, errors.New("TOML: the file is not UTF-8")
	}
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	p := &tomlParser{src: src, line: 1, meta: map[string]*tomlTable{}, aotSub: map[string][]string{}, doc: &tomlDoc{root: map[string]any{}, lines: map[string]int{}}}
	p.meta[""] = &tomlTable{m: p.doc.root, header: true}
	current := []string(nil)
	for {
		p.skipBlank()
		if p.pos >= len(p.src) {
			return p.doc, nil
		}
		var err error
		switch {
		case p.peek() == '#':
			err = p.comment() // skipBlank stopped at a bad one
		case p.peek() == '[' && p.peekAt(1) == '[':
			current, err = p.arrayTableHeader()
		case p.peek() == '[':
			current, err = p.tableHeader()
		default:
			err = p.keyValue(current)
		}
		if err != nil {
			return nil, err
		}
		if err := p.endOfLine(); err != nil {
			return nil, err
		}
	}
}

func (p *tomlParser) errorf(format string, a ...any) error {
	return fmt.Errorf("TOML line %d: %s", p.line, fmt.Sprintf(format, a...))
}

func (p *tomlParser) peek() byte { return p.peekAt(0) }

func (p *tomlParser) peekAt(i int) byte {
	if p.pos+i < len(p.src) {
		return p.src[p.pos+i]
	}
	return 0
}

// skipSpace skips spaces and tabs.
func (p *tomlParser) skipSpace() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// skipBlank skips white space, line breaks and comments.
func (p *tomlParser) skipBlank() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\r' && p.peekAt(1) == '\n':
			p.pos++
		case c == '\n':
			p.pos++
			p.line++
		case c == '#':
			if p.comment() != nil {
				return // endOfLine reports it
			}
		default:
			return
		}
	}
}

// comment skips a comment up to its line break; a control character in it
// is an error (TOML allows tab only).
func (p *tomlParser) comment() error {
	for p.pos < len(p.src) && p.src[p.pos] != '\n' {
		c := p.src[p.pos]
		if c == '\r' && p.peekAt(1) == '\n' {
			break
		}
		if (c < 0x20 && c != '\t') || c == 0x7f {
			return p.errorf("a control character in a comment")
		}
		p.pos++
	}
	return nil
}

// endOfLine expects the rest of the line to be blank or a comment.
func (p *tomlParser) endOfLine() error {
	p.skipSpace()
	if p.peek() == '#' {
		if err := p.comment(); err != nil {
			return err
		}
	}
	switch {
	case p.pos >= len(p.src):
		return nil
	case p.peek() == '\n':
		p.pos++
		p.line++
		return nil
	case p.peek() == '\r' && p.peekAt(1) == '\n':
		p.pos += 2
		p.line++
		return nil
	}
	return p.errorf("unexpected %q after a value (one key = value per line)", p.peek())
}

// key reads a dotted key.
func (p *tomlParser) key() ([]string, error) {
	var keys []string
	for {
		p.skipSpace()
		var k string
		var err error
		switch c := p.peek(); {
		case c == '"':
			k, err = p.basicString()
		case c == '\'':
			k, err = p.literalString()
		case isBareKeyChar(c):
			start := p.pos
			for p.pos < len(p.src) && isBareKeyChar(p.src[p.pos]) {
				p.pos++
			}
			k = string(p.src[start:p.pos])
		default:
			return nil, p.errorf("a key is missing")
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
		if len(keys) > maxTOMLDepth {
			return nil, p.errorf("a dotted key of more than %d parts", maxTOMLDepth)
		}
		p.skipSpace()
		if p.peek() != '.' {
			return keys, nil
		}
		p.pos++
	}
}

func isBareKeyChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// tableHeader reads [a.b] and opens that table.
func (p *tomlParser) tableHeader() ([]string, error) {
	p.pos++
	keys, err := p.key()
	if err != nil {
		return nil, err
	}
	if p.peek() != ']' {
		return nil, p.errorf("a table header is not closed with ]")
	}
	p.pos++
	parent, err := p.descend(p.doc.root, nil, keys[:len(keys)-1], false)
	if err != nil {
		return nil, err
	}
	last := keys[len(keys)-1]
	path := tomlPath(keys)
	switch v, ok := parent[last]; {
	case !ok:
		parent[last] = map[string]any{}
		p.setMeta(keys, &tomlTable{m: parent[last].(map[string]any), header: true})
	default:
		_, isTable := v.(map[string]any)
		t := p.meta[path]
		if !isTable || t == nil || t.header || t.dotted || t.inline {
			return nil, p.errorf("table [%s] is defined twice", strings.Join(keys, "."))
		}
		t.header, t.implicit = true, false
	}
	p.doc.lines[path] = p.line
	return keys, nil
}

// arrayTableHeader reads [[a.b]] and appends a table to that array.
func (p *tomlParser) arrayTableHeader() ([]string, error) {
	p.pos += 2
	keys, err := p.key()
	if err != nil {
		return nil, err
	}
	if p.peek() != ']' || p.peekAt(1) != ']' {
		return nil, p.errorf("an array-of-tables header is not closed with ]]")
	}
	p.pos += 2
	parent, err := p.descend(p.doc.root, nil, keys[:len(keys)-1], false)
	if err != nil {
		return nil, err
	}
	last := keys[len(keys)-1]
	path := tomlPath(keys)
	m := map[string]any{}
	switch v, ok := parent[last]; {
	case !ok:
		parent[last] = []any{m}
		p.setMeta(keys, &tomlTable{header: true}) // the array's; its elements are tables
	default:
		arr, isArr := v.([]any)
		if t := p.meta[path]; !isArr || t == nil || t.m != nil {
			return nil, p.errorf("[[%s]] extends a value that is not an array of tables", strings.Join(keys, "."))
		}
		parent[last] = append(arr, m)
	}
	// Subtables of this element start afresh.
	for _, k := range p.aotSub[path] {
		delete(p.meta, k)
	}
	delete(p.aotSub, path)
	p.doc.lines[path] = p.line
	return keys, nil
}

// descend walks keys from the table at prefix (the table t), creating the
// tables that are missing; dotted says whether a dotted key is making
// them (they are then closed to headers). The last element of an array of
// tables is entered.
func (p *tomlParser) descend(t map[string]any, prefix, keys []string, dotted bool) (map[string]any, error) {
	path := slicesClone(prefix)
	for _, k := range keys {
		path = append(path, k)
		ps := tomlPath(path)
		v, ok := t[k]
		if !ok {
			n := map[string]any{}
			t[k] = n
			p.setMeta(path, &tomlTable{m: n, dotted: dotted, implicit: !dotted})
			if _, seen := p.doc.lines[ps]; !seen {
				p.doc.lines[ps] = p.line
			}
			t = n
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			meta := p.meta[ps]
			if meta != nil && meta.inline {
				return nil, p.errorf("%s is an inline table, which cannot be extended", strings.Join(path, "."))
			}
			if dotted && meta != nil && meta.header {
				return nil, p.errorf("table %s is defined twice", strings.Join(path, "."))
			}
			t = x
		case []any:
			if meta := p.meta[ps]; meta == nil || meta.m != nil || dotted || len(x) == 0 {
				return nil, p.errorf("%s is not a table", strings.Join(path, "."))
			}
			m, _ := x[len(x)-1].(map[string]any)
			if m == nil {
				return nil, p.errorf("%s is not a table", strings.Join(path, "."))
			}
			t = m
		default:
			return nil, p.errorf("%s is a value, not a table", strings.Join(path, "."))
		}
	}
	return t, nil
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// setMeta records how the table at keys was made, and, when it lies under
// an array of tables, that it belongs to that array's last element.
func (p *tomlParser) setMeta(keys []string, t *tomlTable) {
	path := tomlPath(keys)
	p.meta[path] = t
	if p.aotSub == nil {
		return
	}
	for i := 1; i < len(keys); i++ {
		if prefix := tomlPath(keys[:i]); p.meta[prefix] != nil && p.meta[prefix].m == nil {
			p.aotSub[prefix] = append(p.aotSub[prefix], path)
		}
	}
}

// keyValue reads key = value into the table at current.
func (p *tomlParser) keyValue(current []string) error {
	keys, err := p.key()
	if err != nil {
		return err
	}
	if p.peek() != '=' {
		return p.errorf("want = after the key %s", strings.Join(keys, "."))
	}
	p.pos++
	p.skipSpace()
	table, err := p.descend(p.doc.root, nil, current, false)
	if err != nil {
		return err
	}
	parent, err := p.descend(table, current, keys[:len(keys)-1], true)
	if err != nil {
		return err
	}
	last := keys[len(keys)-1]
	if _, ok := parent[last]; ok {
		return p.errorf("key %s is given twice", strings.Join(append(slicesClone(current), keys...), "."))
	}
	line := p.line
	v, err := p.value(0)
	if err != nil {
		return err
	}
	parent[last] = v
	if m, ok := v.(map[string]any); ok {
		full := append(slicesClone(current), keys...)
		p.setMeta(full, &tomlTable{m: m, inline: true})
		p.doc.lines[tomlPath(full)] = line
	}
	return nil
}

// value reads one value at nesting depth.
func (p *tomlParser) value(depth int) (any, error) {
	if depth > maxTOMLDepth {
		return nil, p.errorf("arrays or inline tables nested deeper than %d", maxTOMLDepth)
	}
	switch c := p.peek(); {
	case c == '"':
		if bytes.HasPrefix(p.src[p.pos:], []byte(`"""`)) {
			return p.multilineBasic()
		}
		return p.basicString()
	case c == '\'':
		if bytes.HasPrefix(p.src[p.pos:], []byte(`'''`)) {
			return p.multilineLiteral()
		}
		return p.literalString()
	case c == '[':
		return p.array(depth)
	case c == '{':
		return p.inlineTable(depth)
	case c == 't' || c == 'f':
		for _, w := range []string{"true", "false"} {
			if bytes.HasPrefix(p.src[p.pos:], []byte(w)) && !isBareKeyChar(p.peekAt(len(w))) {
				p.pos += len(w)
				return w == "true", nil
			}
		}
	case c == '+' || c == '-' || c >= '0' && c <= '9' || c == 'i' || c == 'n':
		return p.number()
	}
	return nil, p.errorf("a value is missing or is not TOML")
}

var (
	tomlDateTime = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?)?|\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)`)
	tomlInteger  = regexp.MustCompile(`^[+-]?(0|[1-9](_?\d)*)$`)
	tomlFloat    = regexp.MustCompile(`^[+-]?(0|[1-9](_?\d)*)(\.\d(_?\d)*)?([eE][+-]?\d(_?\d)*)?$`)
)

// number reads an integer, a float, inf, nan, or a date-time (kept as
// its text).
func (p *tomlParser) number() (any, error) {
	// The longest date-time is 35 bytes: the window keeps the match from
	// scanning the rest of the file.
	if m := tomlDateTime.Find(p.src[p.pos:min(p.pos+64, len(p.src))]); m != nil {
		// 2024-01-02 alone could be an arithmetic mistake; TOML makes it
		// a date, and so does this reader.
		p.pos += len(m)
		return string(m), nil
	}
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ']' || c == '}' || c == '#' {
			break
		}
		p.pos++
	}
	tok := string(p.src[start:p.pos])
	switch strings.TrimLeft(tok, "+-") {
	case "inf":
		if strings.HasPrefix(tok, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	}
	for _, base := range []struct {
		prefix string
		base   int
	}{{"0x", 16}, {"0o", 8}, {"0b", 2}} {
		if digits, ok := strings.CutPrefix(tok, base.prefix); ok {
			if digits == "" || strings.HasPrefix(digits, "_") || strings.HasSuffix(digits, "_") || strings.Contains(digits, "__") {
				return nil, p.errorf("%q is not a number", tok)
			}
			n, err := strconv.ParseInt(strings.ReplaceAll(digits, "_", ""), base.base, 64)
			if err != nil {
				return nil, p.errorf("%q is not a number that fits 64 bits", tok)
			}
			return n, nil
		}
	}
	clean := strings.ReplaceAll(tok, "_", "")
	if tomlInteger.MatchString(tok) {
		n, err := strconv.ParseInt(clean, 10, 64)
		if err != nil {
			return nil, p.errorf("%q does not fit 64 bits", tok)
		}
		return n, nil
	}
	if tomlFloat.MatchString(tok) {
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil {
			return nil, p.errorf("%q is not a float that fits 64 bits", tok)
		}
		return f, nil
	}
	return nil, p.errorf("%q is not a number", tok)
}

// basicString reads "…" with escapes.
func (p *tomlParser) basicString() (string, error) {
	p.pos++
	var b strings.Builder
	for {
		if p.pos >= len(p.src) {
			return "", p.errorf("a string is not closed")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		case c == '\n' || c == '\r':
			return "", p.errorf("a line break in a one-line string")
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.errorf("a control character in a string (write it as an escape)")
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// escape reads one escape sequence of a basic string into b.
func (p *tomlParser) escape(b *strings.Builder) error {
	p.pos++
	if p.pos >= len(p.src) {
		return p.errorf("a string ends in a backslash")
	}
	c := p.src[p.pos]
	p.pos++
	switch c {
	case 'b':
		b.WriteByte('\b')
	case 't':
		b.WriteByte('\t')
	case 'n':
		b.WriteByte('\n')
	case 'f':
		b.WriteByte('\f')
	case 'r':
		b.WriteByte('\r')
	case 'e':
		b.WriteByte(0x1b)
	case '"', '\\':
		b.WriteByte(c)
	case 'u', 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		if p.pos+n > len(p.src) {
			return p.errorf("a short \\%c escape", c)
		}
		r, err := strconv.ParseUint(string(p.src[p.pos:p.pos+n]), 16, 32)
		if err != nil || !utf8.ValidRune(rune(r)) {
			return p.errorf("\\%c%s is not a Unicode scalar value", c, p.src[p.pos:p.pos+n])
		}
		b.WriteRune(rune(r))
		p.pos += n
	default:
		return p.errorf("\\%c is not an escape", c)
	}
	return nil
}

// literalString reads '…'.
func (p *tomlParser) literalString() (string, error) {
	p.pos++
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\'':
			s := string(p.src[start:p.pos])
			p.pos++
			return s, nil
		case c == '\n' || c == '\r':
			return "", p.errorf("a line break in a one-line string")
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.errorf("a control character in a string")
		}
		p.pos++
	}
	return "", p.errorf("a string is not closed")
}

// newline consumes a line break at pos, if any.
func (p *tomlParser) newline() bool {
	switch {
	case p.peek() == '\n':
		p.pos++
	case p.peek() == '\r' && p.peekAt(1) == '\n':
		p.pos += 2
	default:
		return false
	}
	p.line++
	return true
}

// closeMultiline ends a multi-line string at its three quotes q, taking
// up to two more quotes into b (TOML lets a string end with one or two of
// its quotes); it reports whether it did.
func (p *tomlParser) closeMultiline(q byte, b *strings.Builder) bool {
	if p.peek() != q || p.peekAt(1) != q || p.peekAt(2) != q {
		return false
	}
	n := 3
	for n < 5 && p.peekAt(n) == q {
		n++
	}
	b.WriteString(strings.Repeat(string(q), n-3))
	p.pos += n
	return true
}

// multilineBasic reads """…""", trimming the line break after the opening
// quotes and each backslash that ends a line with the white space after it.
func (p *tomlParser) multilineBasic() (string, error) {
	p.pos += 3
	p.newline()
	var b strings.Builder
	for {
		if p.pos >= len(p.src) {
			return "", p.errorf("a multi-line string is not closed")
		}
		if p.closeMultiline('"', &b) {
			return b.String(), nil
		}
		c := p.src[p.pos]
		switch {
		case c == '\\':
			// A line-ending backslash.
			j := p.pos + 1
			for j < len(p.src) && (p.src[j] == ' ' || p.src[j] == '\t') {
				j++
			}
			if j < len(p.src) && (p.src[j] == '\n' || p.src[j] == '\r') {
				p.pos = j
				for p.newline() || p.peek() == ' ' || p.peek() == '\t' {
					if p.peek() == ' ' || p.peek() == '\t' {
						p.pos++
					}
				}
				continue
			}
			if err := p.escape(&b); err != nil {
				return "", err
			}
		case p.newline():
			b.WriteByte('\n')
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.errorf("a control character in a string (write it as an escape)")
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// multilineLiteral reads a multi-line literal string (between three
// single quotes): no escapes.
func (p *tomlParser) multilineLiteral() (string, error) {
	p.pos += 3
	p.newline()
	var b strings.Builder
	for {
		if p.pos >= len(p.src) {
			return "", p.errorf("a multi-line string is not closed")
		}
		if p.closeMultiline('\'', &b) {
			return b.String(), nil
		}
		c := p.src[p.pos]
		switch {
		case p.newline():
			b.WriteByte('\n')
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.errorf("a control character in a string")
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// array reads [v, v, …]: line breaks and comments between values, and a
// trailing comma, are allowed.
func (p *tomlParser) array(depth int) ([]any, error) {
	p.pos++
	out := []any{}
	for {
		p.skipBlank()
		if p.peek() == '#' {
			return nil, p.errorf("a control character in a comment")
		}
		if p.peek() == ']' {
			p.pos++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skipBlank()
		switch p.peek() {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return out, nil
		default:
			if p.pos >= len(p.src) {
				return nil, p.errorf("an array is not closed")
			}
			return nil, p.errorf("want , or ] in an array")
		}
	}
}

// inlineTable reads {k = v, …} on one line.
func (p *tomlParser) inlineTable(depth int) (map[string]any, error) {
	p.pos++
	t := map[string]any{}
	sub := &tomlParser{src: p.src, pos: p.pos, line: p.line, meta: map[string]*tomlTable{}, doc: &tomlDoc{root: t, lines: map[string]int{}}}
	sub.meta[""] = &tomlTable{m: t, header: true}
	sub.skipSpace()
	if sub.peek() == '}' {
		p.pos = sub.pos + 1
		return t, nil
	}
	for {
		keys, err := sub.key()
		if err != nil {
			return nil, err
		}
		if sub.peek() != '=' {
			return nil, sub.errorf("want = after the key %s", strings.Join(keys, "."))
		}
		sub.pos++
		sub.skipSpace()
		parent, err := sub.descend(t, nil, keys[:len(keys)-1], true)
		if err != nil {
			return nil, err
		}
		last := keys[len(keys)-1]
		if _, ok := parent[last]; ok {
			return nil, sub.errorf("key %s is given twice", strings.Join(keys, "."))
		}
		v, err := sub.value(depth + 1)
		if err != nil {
			return nil, err
		}
		parent[last] = v
		if m, ok := v.(map[string]any); ok {
			sub.meta[tomlPath(keys)] = &tomlTable{m: m, inline: true}
		}
		sub.skipSpace()
		switch sub.peek() {
		case ',':
			sub.pos++
			sub.skipSpace()
			if c := sub.peek(); c == '\n' || c == '\r' || c == '}' {
				return nil, sub.errorf("an inline table is written on one line, with no comma before its }")
			}
		case '}':
			p.pos, p.line = sub.pos+1, sub.line
			return t, nil
		default:
			return nil, sub.errorf("want , or } in an inline table (written on one line)")
		}
	}
}
