package jsonvalue

import (
	"fmt"
	"testing"
)

func TestRepeatedKey(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		depth     int
		want      string
	}{
		{"none", `{"a":1,"b":{"a":2}}`, 0, ""},
		{"top level", `{"a":1,"b":2,"a":3}`, 0, "/a"},
		{"escaped", `{"a":1,"\u0061":3}`, 0, "/a"},
		{"nested", `{"x":{"y":[{"k":1,"k":2}]}}`, 0, "/x/y/0/k"},
		{"nested, shallow look", `{"x":{"k":1,"k":2}}`, 1, ""},
		{"top, shallow look", `{"k":{"a":1,"a":2},"k":1}`, 1, "/k"},
		{"in an array at top", `[{"a":1},{"b":1,"b":2}]`, 1, "/1/b"},
		{"pointer escaping", `{"a/b":1,"a/b":2}`, 0, "/a~1b"},
		{"not JSON", `{"a":1,`, 0, ""},
		{"a scalar", `3`, 0, ""},
		{"empty", ``, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RepeatedKey([]byte(tt.doc), tt.depth)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("RepeatedKey(%s, %d) = %q, %v; want %q", tt.doc, tt.depth, got, ok, tt.want)
			}
		})
	}
}

func FuzzRepeatedKey(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `[{"b":[{"c":1,"c":1}]}]`, `{}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, ok := RepeatedKey(b, 0)
		if ok != (p != "") {
			t.Fatalf("pointer %q with ok %v", p, ok)
		}
	})
}

func TestMemberLines(t *testing.T) {
	servers := "{\n  \"mcpServers\": {\n    \"one\": {\"command\": \"x\"},\n\n    \"two\": {\n      \"url\": \"http://h\"\n    }\n  },\n  \"projects\": {\"/p\": {\"mcpServers\": {\"three\": {},\n \"one\": {}}}}\n}\n"
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"mcpServers"}, "map[one:3 two:5]"},
		{[]string{"projects", "/p", "mcpServers"}, "map[one:10 three:9]"},
		{[]string{"none"}, "map[]"},
	} {
		if got := fmt.Sprint(MemberLines([]byte(servers), tc.path...)); got != tc.want {
			t.Errorf("MemberLines(%q) = %s, want %s", tc.path, got, tc.want)
		}
	}
	if got := fmt.Sprint(MemberLines([]byte("{\"s\": {\"a\": 1,\n\"b\": "), "s")); got != "map[a:1 b:2]" {
		t.Errorf("broken JSON keeps what was read: %s", got)
	}
}
