// Package safetext is the one sanitiser for text mcpdrill does not control
// (what a server says: its name, tool names, descriptions, messages, stderr;
// registry metadata; the argv of a file the user did not write) on its way
// to a terminal, a plain-text CI log or a Markdown document.
//
// A terminal obeys control sequences and a CI runner obeys workflow
// commands, so such text could otherwise write the clipboard (OSC 52), clear
// the screen, hide or rewrite what was printed (CR, backspace, cursor
// moves), plant hyperlinks (OSC 8), reorder what the reader sees
// (bidirectional overrides), or make GitHub Actions mask, annotate or set
// outputs (a line starting "::", or "##[" anywhere in it). The rules:
//
//   - every rune Unsafe reports is written as an escape: "\x1b", "\n", "\t",
//     "\u202e" (Go's notation), and a byte that is not UTF-8 as "\xNN";
//   - "##[" (the runner's older command prefix, obeyed anywhere in a line)
//     becomes "#\x23[";
//   - a line whose first non-blank characters are "::" (the runner's
//     command prefix) starts "\x3a:" instead.
//
// Text escapes a single line; Block keeps line breaks and guards each line;
// Markdown also makes the text inert as Markdown (no link, image, HTML,
// emphasis or autolink). The package is pure string work.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r may not reach a terminal or a log as itself: C0
// controls (tab, line feed and carriage return among them), DEL, C1
// controls, the bidirectional formatting characters (U+061C, U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069), and every other rune that is not
// graphic as strconv.IsGraphic says (format characters such as zero-width
// spaces, line and paragraph separators, private-use, surrogate and
// unassigned code points). A byte that is not UTF-8 is escaped too; the
// replacement character U+FFFD is graphic and safe.
func Unsafe(r rune) bool {
	return !strconv.IsGraphic(r)
}

// escapeRune writes r as an escape in Go's notation.
func escapeRune(b *strings.Builder, r rune) {
	q := strconv.QuoteRuneToASCII(r)
	b.WriteString(q[1 : len(q)-1])
}

// escape writes s with every unsafe rune escaped and "##[" broken; lines
// keeps line feeds as they are.
func escape(b *strings.Builder, s string, lines bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case r == '\n' && lines:
			b.WriteByte('\n')
		case r == '#' && strings.HasPrefix(s[i:], "##["):
			b.WriteString(`#\x23[`)
			n = 3
		case Unsafe(r):
			escapeRune(b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// Text returns s fit to print on one line of a terminal or a CI log: every
// unsafe rune (line breaks included) escaped, "##[" broken, and a leading
// "::" escaped (see the package comment). Text that needs none of it comes
// back as it is.
func Text(s string) string {
	if clean(s, false) {
		return s
	}
	var b strings.Builder
	escape(&b, s, false)
	return LineStart(b.String())
}

// Block is Text for text of several lines: line feeds are kept, and each
// line is made safe as Text makes one (a carriage return is escaped, so no
// line can overwrite another).
func Block(s string) string {
	if clean(s, true) {
		return s
	}
	var b strings.Builder
	escape(&b, s, true)
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = LineStart(l)
	}
	return strings.Join(lines, "\n")
}

// clean reports whether s needs no change from Text (lines false) or Block
// (lines true).
func clean(s string, lines bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if Unsafe(r) && !(lines && r == '\n') {
			return false
		}
	}
	if strings.Contains(s, "##[") {
		return false
	}
	for l := range strings.SplitSeq(s, "\n") {
		if commandStart(l) {
			return false
		}
	}
	return true
}

// commandStart reports whether the line starts, after blanks, with "::".
func commandStart(line string) bool {
	return strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::")
}

// LineStart escapes the first ':' of a line that starts, after blanks,
// with "::", the prefix of a GitHub Actions workflow command. A renderer
// that breaks safe text into lines of its own (wrapping a table cell, say)
// passes each line it makes through LineStart, since a break can put a
// "::" from the middle of the text at the start of a line.
func LineStart(line string) string {
	if !commandStart(line) {
		return line
	}
	i := strings.Index(line, "::")
	return line[:i] + `\x3a` + line[i+1:]
}

// Quote returns s in double quotes with Go's escapes (strconv.QuoteToGraphic:
// quotes, backslashes and every unsafe rune escaped) and "##[" broken: for
// a name or a value shown inside a sentence.
func Quote(s string) string {
	return strings.ReplaceAll(strconv.QuoteToGraphic(s), "##[", `#\x23[`)
}

// markdownSpecial are the characters Markdown always escapes with a
// backslash: those that open or close a link or an image ('[', ']'), raw
// HTML or an autolink ('<', '>'), an entity ('&', which could spell a
// control character), a code span, emphasis or strikethrough ('`', '*',
// '~'), a table cell ('|'), math ('$'), an e-mail autolink ('@'), and the
// backslash itself.
const markdownSpecial = "\\`*[]<>&|~@$"

// Markdown returns s as inline Markdown text that renders as the text
// itself: made safe as Text makes it, then each of markdownSpecial escaped
// with a backslash, and also '_' where it is not inside a word, the ':' of
// "://" and the '.' of "www." (GitHub's autolinks), so that no link, image,
// raw HTML, entity, emphasis, code span, cell break or autolink can form.
// It is for a table cell or a list item, not for the start of a line.
func Markdown(s string) string {
	s = Text(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if markdownEscapes(s, i) {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// markdownEscapes reports whether Markdown puts a backslash before s[i].
func markdownEscapes(s string, i int) bool {
	switch c := s[i]; {
	case strings.IndexByte(markdownSpecial, c) >= 0:
		return true
	case c == '_':
		return i == 0 || i == len(s)-1 || !wordByte(s[i-1]) || !wordByte(s[i+1])
	case c == ':':
		return strings.HasPrefix(s[i:], "://")
	case c == '.':
		return i >= 3 && strings.EqualFold(s[i-3:i], "www")
	}
	return false
}

// wordByte reports whether c is an ASCII letter or digit.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
