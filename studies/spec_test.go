package studies

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		names   []string
		wantErr string
	}{
		{"mcpServers", `{"mcpServers":{"b":{"command":"x"},"a":{"url":"http://h/mcp","headers":{"Authorization":"Bearer ${T}"}}}}`, []string{"a", "b"}, ""},
		{"vscode servers key", `{"servers":{"one":{"type":"stdio","command":"x","args":["--y"]}}}`, []string{"one"}, ""},
		{"launch", `{"mcpServers":{"h":{"url":"http://127.0.0.1:${PORT}/mcp","launch":{"command":"srv","args":["--port","${PORT}"],"ready":"5s"}}}}`, []string{"h"}, ""},
		{"extra top-level keys", `{"inputs":[],"mcpServers":{"a":{"command":"x"}}}`, []string{"a"}, ""},
		{"both keys", `{"mcpServers":{"a":{"command":"x"}},"servers":{}}`, nil, "not both"},
		{"no key", `{"other":{}}`, nil, `no "mcpServers"`},
		{"empty", `{"mcpServers":{}}`, nil, "empty"},
		{"null", `{"mcpServers":null}`, nil, "not an object"},
		{"neither command nor url", `{"mcpServers":{"a":{"args":["x"]}}}`, nil, `give "command" or "url"`},
		{"command and url", `{"mcpServers":{"a":{"command":"x","url":"http://h"}}}`, nil, "not both"},
		{"launch without url", `{"mcpServers":{"a":{"command":"x","launch":{"command":"y"}}}}`, nil, `"launch" needs "url"`},
		{"launch without command", `{"mcpServers":{"a":{"url":"http://127.0.0.1:1/mcp","launch":{}}}}`, nil, `needs a "command"`},
		{"launch off loopback", `{"mcpServers":{"a":{"url":"http://example.test/mcp","launch":{"command":"y"}}}}`, nil, "loopback"},
		{"bad ready", `{"mcpServers":{"a":{"url":"http://127.0.0.1:${PORT}/","launch":{"command":"y","ready":"soon"}}}}`, nil, "launch.ready"},
		{"headers on stdio", `{"mcpServers":{"a":{"command":"x","headers":{"A":"b"}}}}`, nil, `"headers" need "url"`},
		{"unknown type", `{"mcpServers":{"a":{"type":"ws","command":"x"}}}`, nil, "unknown type"},
		{"type mismatch", `{"mcpServers":{"a":{"type":"stdio","url":"http://h"}}}`, nil, "does not match"},
		{"trailing data", `{"mcpServers":{"a":{"command":"x"}}} {}`, nil, "trailing"},
		{"not json", `mcpServers`, nil, "servers.json"},
		{"duplicate name", `{"mcpServers":{"a":{"command":"x"},"b":{"command":"y"},"a":{"command":"z"}}}`, nil, `server "a" is given twice`},
		{"names differing in case", `{"mcpServers":{"a":{"command":"x"},"A":{"command":"y"}}}`, []string{"A", "a"}, ""},
		{"wrong field type", `{"mcpServers":{"a":{"command":"x","args":"y"}}}`, nil, `server "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tt.in), "/spec")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range s.Servers {
				names = append(names, e.Name)
			}
			if !slices.Equal(names, tt.names) {
				t.Fatalf("names = %v, want %v", names, tt.names)
			}
			if !strings.HasPrefix(s.Hash, "sha256:") || len(s.Hash) != 71 {
				t.Fatalf("hash = %q", s.Hash)
			}
		})
	}
}

func TestSpecHashFollowsBytes(t *testing.T) {
	a, _ := ParseSpec([]byte(`{"mcpServers":{"a":{"command":"x"}}}`), "")
	b, _ := ParseSpec([]byte(`{"mcpServers":{"a":{"command":"x"}}}`), "/elsewhere")
	c, _ := ParseSpec([]byte(`{"mcpServers":{"a":{"command":"y"}}}`), "")
	if a.Hash != b.Hash {
		t.Fatal("same bytes, different hash")
	}
	if a.Hash == c.Hash {
		t.Fatal("different bytes, same hash")
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"HOME": "/h", "EMPTY": "", "PORT": "99"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want string
		missing  []string
	}{
		{"plain", "plain", nil},
		{"${HOME}/x", "/h/x", nil},
		{"a${EMPTY}b", "ab", nil},
		{"$HOME stays", "$HOME stays", nil},
		{"^[a-z]+$", "^[a-z]+$", nil},
		{"${not valid}", "${not valid}", nil},
		{"${1X}", "${1X}", nil},
		{"${UNSET}-${UNSET}-${OTHER}", "--", []string{"UNSET", "OTHER"}},
		{"${HOME", "${HOME", nil},
		{"http://127.0.0.1:${PORT}/mcp", "http://127.0.0.1:99/mcp", nil},
		{"${}", "${}", nil},
	}
	for _, tt := range tests {
		got, missing := Expand(tt.in, lookup)
		if got != tt.want || !slices.Equal(missing, tt.missing) {
			t.Errorf("Expand(%q) = %q, %v; want %q, %v", tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func TestVarsTakePrecedence(t *testing.T) {
	v := Vars{SpecDir: "/spec", WorkDir: "/work", Port: "1234"}
	env := func(k string) (string, bool) { return "env-" + k, true }
	got, _ := Expand("${SPEC_DIR} ${WORK_DIR} ${PORT} ${USER}", v.lookup(env))
	if want := "/spec /work 1234 env-USER"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// Without a launch there is no port: ${PORT} is then an ordinary variable.
	_, missing := Expand("${PORT}", Vars{}.lookup(nil))
	if !slices.Equal(missing, []string{"PORT"}) {
		t.Fatalf("missing = %v", missing)
	}
}

func TestResolvePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"node", "node"},
		{"node_modules/.bin/x", "/spec/node_modules/.bin/x"},
		{"./run.sh", "/spec/run.sh"},
		{"/usr/bin/env", "/usr/bin/env"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := resolvePath(tt.in, "/spec"); got != tt.want {
			t.Errorf("resolvePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":["${A}"],"env":{"K":"v"}}}}`))
	f.Add([]byte(`{"servers":{"h":{"url":"http://127.0.0.1:${PORT}/mcp","launch":{"command":"s"}}}}`))
	f.Add([]byte(`{"mcpServers":{"":{"command":"x"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec(data, "/d")
		if err != nil {
			return
		}
		if len(s.Servers) == 0 {
			t.Fatal("accepted an empty spec")
		}
		for i, e := range s.Servers {
			if i > 0 && s.Servers[i-1].Name >= e.Name {
				t.Fatal("servers not sorted by name")
			}
			if (e.Command == "") == (e.URL == "") {
				t.Fatal("accepted an entry without exactly one of command and url")
			}
		}
	})
}

func FuzzExpand(f *testing.F) {
	f.Add("${A}${B}$C${")
	f.Add("x${A_1}y${}z")
	f.Fuzz(func(t *testing.T, s string) {
		got, _ := Expand(s, func(string) (string, bool) { return "", false })
		if !strings.Contains(s, "${") && got != s {
			t.Fatalf("changed a string without ${: %q -> %q", s, got)
		}
		if len(got) > len(s) {
			t.Fatalf("expanding to empty values grew the string: %q -> %q", s, got)
		}
		again, _ := Expand(s, func(k string) (string, bool) { return "${" + k + "}", true })
		if again != s {
			t.Fatalf("identity expansion changed %q to %q", s, again)
		}
	})
}
