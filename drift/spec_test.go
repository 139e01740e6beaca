package drift

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

func TestParseSpec(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s, err := ParseSpec([]byte(`
server:
  url: http://127.0.0.1:1/mcp
  headers:
    authorization: Bearer ${TOKEN}
canaries:
  - tool: search
    args: {query: widget, limit: 3}
  - tool: search
    args: {query: other}
  - tool: get
    name: get-one
`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{s.Canaries[0].Name, s.Canaries[1].Name, s.Canaries[2].Name}; strings.Join(got, ",") != "search,search#2,get-one" {
		t.Errorf("names %v", got)
	}
	cfg := s.Config(mcp.Config{MaxListPages: 7})
	if cfg.Headers.Get("Authorization") != "Bearer s3cret" || cfg.MaxListPages != 7 || cfg.URL == "" {
		t.Errorf("config %+v", cfg)
	}
	s2, err := ParseSpec([]byte("server:\n  command: [node, srv.js]\n  env: {A: \"${TOKEN}x\"}\n"), lookup)
	if err != nil || s2.Config(mcp.Config{}).Env[0] != "A=s3cretx" {
		t.Errorf("env: %v %+v", err, s2)
	}
}

// TestParseSpecCommand: a stdio server is written as in servers.json
// (command and args) or as one list, and either way becomes one argv.
func TestParseSpecCommand(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"servers.json style", "server: {command: npx, args: [-y, some-server]}\n", []string{"npx", "-y", "some-server"}},
		{"program alone", "server: {command: ./server}\n", []string{"./server"}},
		{"one list", "server: {command: [node, srv.js]}\n", []string{"node", "srv.js"}},
		{"a list and args", "server: {command: [node], args: [srv.js, --quiet]}\n", []string{"node", "srv.js", "--quiet"}},
		{"a program with a space", "server: {command: \"/opt/my server/run\", args: [a]}\n", []string{"/opt/my server/run", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tc.doc), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Config(mcp.Config{}).Command; !slices.Equal(got, tc.want) || len(s.Server.Args) != 0 {
				t.Errorf("command %q (args %q), want %q", got, s.Server.Args, tc.want)
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	cases := map[string]string{
		"no server":        "canaries: []\n",
		"both":             "server: {url: http://x, command: [a]}\n",
		"headers on stdio": "server: {command: [a], headers: {A: b}}\n",
		"unset env":        "server: {url: http://x, headers: {A: \"${NOPE_NOT_SET}\"}}\n",
		"unknown key":      "server: {url: http://x}\nextra: 1\n",
		"canary no tool":   "server: {url: http://x}\ncanaries: [{args: {}}]\n",
		"duplicate name":   "server: {url: http://x}\ncanaries: [{tool: a, name: n}, {tool: b, name: n}]\n",
		"args alone":       "server: {args: [a]}\n",
		"args with url":    "server: {url: http://x, args: [a]}\n",
		"empty program":    "server: {command: \"\", args: [a]}\n",
		"command mapping":  "server: {command: {a: b}}\n",
		"command numbers":  "server: {command: [[a]]}\n",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseSpec([]byte(doc), func(string) (string, bool) { return "", false })
			if !errors.Is(err, ErrBadSpec) {
				t.Fatalf("err = %v", err)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Error("error leaks a value")
			}
		})
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add([]byte("server: {url: http://x}\ncanaries: [{tool: a, args: {q: 1}}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSpec(b, func(string) (string, bool) { return "v", true })
		if err == nil {
			_ = s.Config(mcp.Config{})
		}
	})
}
