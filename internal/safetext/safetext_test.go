package safetext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/hostile"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, é and 日本", "plain text, é and 日本"},
		{"C:\\Users\\me", "C:\\Users\\me"},
		{"std::vector and [::1]", "std::vector and [::1]"},
		{"\x1b]52;c;aGk=\x07", `\x1b]52;c;aGk=\a`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"\u202eabc", `\u202eabc`},
		{"\u0085\u009b", `\u0085\u009b`},
		{"nul\x00", `nul\x00`},
		{"del\x7f", `del\x7f`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"\xff", `\xff`},
		{"::error::x", `\x3a:error::x`},
		{" \u00a0::add-mask::x", " \u00a0\\x3a:add-mask::x"},
		{"\t::x", `\t::x`}, // the tab is escaped: the line starts with '\'
		{"x ::error::y", "x ::error::y"},
		{"say ##[error]x", `say #\x23[error]x`},
		{"", ""},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBlock(t *testing.T) {
	in := "first\n::error::second\r\n  ::warning::third\n\x1b[2Jfourth"
	want := "first\n\\x3a:error::second\\r\n  \\x3a:warning::third\n\\x1b[2Jfourth"
	if got := Block(in); got != want {
		t.Errorf("Block = %q, want %q", got, want)
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"add", `"add"`},
		{"a\x1b]52;c;x\x07", `"a\x1b]52;c;x\a"`},
		{"\u202e", `"\u202e"`},
		{`q"b\`, `"q\"b\\"`},
		{"##[error]x", `"#\x23[error]x"`},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain words 1.2.3 (x) {y} #1 a!", "plain words 1.2.3 (x) {y} #1 a!"},
		{"read_file ${WORK_DIR}", `read_file \${WORK_DIR}`},
		{"_em_ __b__", `\_em\_ \_\_b\_\_`},
		{"[x](https://e.example/)", `\[x\](https\://e.example/)`},
		{"![i](u)", `!\[i\](u)`},
		{"<b>&amp;</b>", `\<b\>\&amp;\</b\>`},
		{"a|b", `a\|b`},
		{"visit www.e.example", `visit www\.e.example`},
		{"me@e.example", `me\@e.example`},
		{"*em* `code` ~~s~~ $x$", "\\*em\\* \\`code\\` \\~\\~s\\~\\~ \\$x\\$"},
		{"\x1b[2J", `\\x1b\[2J`},
		{"two\nlines", `two\\nlines`},
	} {
		if got := Markdown(tc.in); got != tc.want {
			t.Errorf("Markdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// checkSafe fails for output that lets a hostile string through: an unsafe
// rune (except line feeds when lines), "##[", or a line that starts with
// "::".
func checkSafe(t *testing.T, what, out string, lines bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: not UTF-8: %q", what, out)
	}
	for _, r := range out {
		if Unsafe(r) && !(lines && r == '\n') {
			t.Errorf("%s: unsafe rune %U in %q", what, r, out)
		}
	}
	if strings.Contains(out, "##[") {
		t.Errorf("%s: ##[ in %q", what, out)
	}
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(strings.TrimLeftFunc(l, unicode.IsSpace), "::") {
			t.Errorf("%s: a line starts with :: in %q", what, out)
		}
	}
}

// checkMarkdown fails when Markdown(s) is unsafe text or leaves a special
// character unescaped (not after an odd run of backslashes), or a "www."
// that can autolink.
func checkMarkdown(t *testing.T, s string) {
	t.Helper()
	md := Markdown(s)
	checkSafe(t, "Markdown", md, false)
	escaped := func(i int) bool {
		n := 0
		for j := i - 1; j >= 0 && md[j] == '\\'; j-- {
			n++
		}
		return n%2 == 1
	}
	for i := 0; i < len(md); i++ {
		c := md[i]
		must := strings.IndexByte("`*[]<>&|~@$", c) >= 0 ||
			c == '_' && (i == 0 || i == len(md)-1 || !wordByte(md[i-1]) || !wordByte(md[i+1])) ||
			c == ':' && strings.HasPrefix(md[i:], "://") ||
			c == '.' && i >= 3 && strings.EqualFold(md[i-3:i], "www")
		if must && !escaped(i) {
			t.Fatalf("Markdown(%q) = %q: %q at %d is not escaped", s, md, c, i)
		}
	}
}

func TestHostileCorpus(t *testing.T) {
	for _, h := range hostile.Strings {
		checkSafe(t, "Text", Text(h), false)
		checkSafe(t, "Block", Block(h), true)
		checkSafe(t, "Quote", Quote(h), false)
		checkMarkdown(t, h)
	}
}

func FuzzText(f *testing.F) {
	for _, h := range hostile.Strings {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkSafe(t, "Text", Text(s), false)
		checkSafe(t, "Block", Block(s), true)
		checkSafe(t, "Quote", Quote(s), false)
		checkMarkdown(t, s)
		if s == Text(s) && strings.ContainsFunc(s, Unsafe) {
			t.Fatalf("Text(%q) kept an unsafe rune", s)
		}
	})
}
