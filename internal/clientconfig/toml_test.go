package clientconfig

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseTOMLValues(t *testing.T) {
	doc, err := parseTOML([]byte(`
# comment
s = "a\tb\u00e9\U0001F600\"\\"   # trailing comment
l = 'C:\path'
ml = """
one \
   two
three"""
mll = '''
raw \n'''
i = +1_000
h = 0xdead_beef
o = 0o17
b = 0b101
f = -3.5e2
inf = -inf
t = true
d = 1979-05-27T07:32:00Z
ld = 1979-05-27
arr = [ 1, [2, 3], { x = "y" }, ]
empty = []
inline = { a.b = 1, "q k" = 'v' }
"quoted key" = 1
dotted.key = 2
q = """a""""
` + "lq = '''b'''''\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(doc.root)
	r := doc.root
	checks := map[string]bool{
		"basic escapes":    r["s"] == "a\tbé😀\"\\",
		"literal":          r["l"] == `C:\path`,
		"multi-line basic": r["ml"] == "one two\nthree",
		"multi-line raw":   r["mll"] == `raw \n`,
		"integer":          r["i"] == int64(1000),
		"hex":              r["h"] == int64(0xdeadbeef),
		"octal":            r["o"] == int64(15),
		"binary":           r["b"] == int64(5),
		"float":            r["f"] == -350.0,
		"inf":              r["inf"] == math.Inf(-1),
		"bool":             r["t"] == true,
		"date-time text":   r["d"] == "1979-05-27T07:32:00Z",
		"local date":       r["ld"] == "1979-05-27",
		"quoted key":       r["quoted key"] == int64(1),
		"quotes ending":    r["q"] == `a"` && r["lq"] == "b''",
		"dotted key":       r["dotted"].(map[string]any)["key"] == int64(2),
		"inline dotted":    r["inline"].(map[string]any)["a"].(map[string]any)["b"] == int64(1),
		"array":            len(r["arr"].([]any)) == 3 && len(r["empty"].([]any)) == 0,
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("%s: %s", name, got)
		}
	}
}

// TestParseTOMLTables: headers, arrays of tables, and where each table
// was opened.
func TestParseTOMLTables(t *testing.T) {
	doc, err := parseTOML([]byte("[a.b]\nx = 1\n[a]\ny = 2\n[[list]]\nn = 1\n[list.sub]\nk = 1\n[[list]]\nn = 2\n[list.sub]\nk = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := doc.root["a"].(map[string]any)
	if a["y"] != int64(2) || a["b"].(map[string]any)["x"] != int64(1) {
		t.Errorf("a = %v", a)
	}
	list := doc.root["list"].([]any)
	if len(list) != 2 || list[1].(map[string]any)["sub"].(map[string]any)["k"] != int64(2) {
		t.Errorf("list = %v", list)
	}
	if doc.lines[tomlPath([]string{"a", "b"})] != 1 || doc.lines[tomlPath([]string{"a"})] != 3 {
		t.Errorf("lines %v", doc.lines)
	}
}

// TestParseTOMLAbuse is the abuse list of the reader: each malformed or
// hostile document is refused, with its line, and nothing panics.
func TestParseTOMLAbuse(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"a key given twice", "a = 1\na = 2", "line 2: key a is given twice"},
		{"a dotted key given twice", "a.b = 1\na.b = 2", "key a.b is given twice"},
		{"a quoted key equal to a bare one", "a = 1\n\"a\" = 2", "given twice"},
		{"a table defined twice", "[t]\n[t]", "table [t] is defined twice"},
		{"a header over a dotted table", "t.x = 1\n[t]", "defined twice"},
		{"a dotted key into a header's table", "[t.x]\n[t]\nx.y = 1", "defined twice"},
		{"extending an inline table", "t = {a = 1}\n[t.b]", "inline table"},
		{"extending an inline table by a dotted key", "t = {a = 1}\nt.b = 2", "inline table"},
		{"a key over a value", "a = 1\na.b = 2", "is a value, not a table"},
		{"an array of tables over a table", "[t]\n[[t]]", "not an array of tables"},
		{"an array of tables over an array", "t = [1]\n[[t]]", "not an array of tables"},
		{"two values on a line", "a = 1 b = 2", "one key = value per line"},
		{"no value", "a = ", "a value is missing"},
		{"no key", "= 1", "a key is missing"},
		{"an unterminated string", `a = "abc`, "not closed"},
		{"an unterminated multi-line string", `a = """abc`, "not closed"},
		{"an unterminated array", "a = [1, 2", "not closed"},
		{"a line break in a string", "a = \"a\nb\"", "line break"},
		{"a control character in a string", "a = \"a\x1b[31mb\"", "control character"},
		{"a control character in a literal", "a = 'a\x07b'", "control character"},
		{"a control character in a comment", "a = 1 # x\x1b", "control character in a comment"},
		{"a bad escape", `a = "\q"`, `\q is not an escape`},
		{"a surrogate", `a = "\uD800"`, "not a Unicode scalar value"},
		{"invalid UTF-8", "a = \"\xff\"", "not UTF-8"},
		{"an integer too large", "a = 99999999999999999999", "does not fit 64 bits"},
		{"a leading zero", "a = 012", "not a number"},
		{"a bad hex", "a = 0x_1", "not a number"},
		{"a newline in an inline table", "a = {b = 1,\nc = 2}", "on one line"}, {"a newline in an inline table value", "a = {b = 1\n}", "on one line"},
		{"a header not closed", "[a", "not closed"},
		{"deep arrays", "a = " + strings.Repeat("[", 200) + strings.Repeat("]", 200), "nested deeper"},
		{"deep inline tables", "a = " + strings.Repeat("{b = ", 200) + "1" + strings.Repeat("}", 200), "nested deeper"},
		{"a bare word", "a = yes", "not TOML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTOML([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseCodex(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"no servers", "model = \"x\"", "no \"mcpServers\""},
		{"servers not a table", "mcp_servers = 1", "not a table"},
		{"a server not a table", "[mcp_servers]\nx = 1", `server "x": mcp_servers.x is not a table`},
		{"args not strings", "[mcp_servers.x]\ncommand = \"a\"\nargs = [1]", "args[0] is not a string"},
		{"env not a table", "[mcp_servers.x]\ncommand = \"a\"\nenv = \"A=1\"", "env is not a table"},
		{"enabled not a boolean", "[mcp_servers.x]\ncommand = \"a\"\nenabled = \"no\"", "enabled is not a boolean"},
		{"neither command nor url", "[mcp_servers.x]\nargs = [\"a\"]", `give "command" or "url"`},
		{"both bearers", "[mcp_servers.x]\nurl = \"http://h\"\nbearer_token = \"t\"\nbearer_token_env_var = \"T\"", "not both"},
		{"a bad variable name", "[mcp_servers.x]\nurl = \"http://h\"\nbearer_token_env_var = \"A-B\"", "not an environment variable name"},
		{"headers on stdio", "[mcp_servers.x]\ncommand = \"a\"\nbearer_token_env_var = \"T\"", `"headers" need "url"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTOML([]byte(tc.doc), "/d")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := ParseTOML([]byte("x = 1"), ""); !errors.Is(err, ErrNoServers) {
		t.Errorf("no mcp_servers: %v, want ErrNoServers", err)
	}
	// A Codex bearer token comes from the environment, as Codex reads it,
	// and is a secret; strings are taken as written.
	c, err := ParseTOML([]byte("[mcp_servers.f]\nurl = \"https://h/mcp?k=${K}\"\nbearer_token_env_var = \"TOK\"\n"), "/d")
	if err != nil {
		t.Fatal(err)
	}
	x := NewExpander(Resolver{Syntax: c.Syntax, LookupEnv: func(k string) (string, bool) {
		return map[string]string{"TOK": "s3cret", "K": "no"}[k], k == "TOK" || k == "K"
	}})
	tgt := c.Servers[0].Resolve(x, "/d")
	if x.Err() != nil || tgt.Headers.Get("Authorization") != "Bearer s3cret" || tgt.URL != "https://h/mcp?k=${K}" {
		t.Fatalf("target %+v, err %v", tgt, x.Err())
	}
	if !strings.Contains(strings.Join(tgt.Secrets, " "), "s3cret") || !strings.Contains(strings.Join(tgt.Used, " "), "$TOK") {
		t.Errorf("secrets %q, used %q", tgt.Secrets, tgt.Used)
	}
	x = NewExpander(Resolver{Syntax: c.Syntax, LookupEnv: func(string) (string, bool) { return "", false }})
	c.Servers[0].Resolve(x, "/d")
	if err := x.Err(); err == nil || !strings.Contains(err.Error(), "TOK") {
		t.Errorf("an unset token variable: %v", err)
	}
}

func FuzzParseTOML(f *testing.F) {
	for _, s := range []string{
		"[mcp_servers.a]\ncommand = \"x\"\nargs = [\"-y\", 'p']\nenv = { K = \"v\" }\n",
		"a.b.c = 1\n[x]\ny = [1, [2], {z = 3}]\n[[l]]\n[[l]]\n",
		"s = \"\"\"\nx\\\n  y\"\"\"\nt = '''a'''\n",
		"n = 0x1F\nf = 1e3\nd = 2024-01-02T03:04:05Z\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, err := parseTOML(b)
		if err != nil {
			return
		}
		// Whatever parses is plain data: it encodes as JSON (NaN and the
		// infinities aside, which JSON has no words for).
		if _, err := json.Marshal(doc.root); err != nil && !strings.Contains(err.Error(), "unsupported value") {
			t.Fatalf("parsed into something that is not data: %v", err)
		}
		_, _ = ParseTOML(b, "/d")
	})
}
