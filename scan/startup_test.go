//go:build unix

package scan

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// A stdio server that fails at start-up is reported with what its process
// did and the line of its stderr that says why, masked.
func TestStartupFailureExplainsItself(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		env     []string
		exited  bool
		status  *int
		signal  string
		said    string
		message string
	}{
		{"exits 1", `echo "loading config" >&2; echo "missing API_KEY" >&2; exit 1`, nil, true, ptr(1), "", "missing API_KEY",
			`no MCP session could be opened: the server exited with status 1 during the handshake; its stderr ends "missing API_KEY"`},
		{"killed", `echo "about to die" >&2; kill -SEGV $$`, nil, true, nil, "SIGSEGV", "about to die",
			`no MCP session could be opened: the server was killed by SIGSEGV during the handshake; its stderr ends "about to die"`},
		{"silent exit", `exit 3`, nil, true, ptr(3), "", "",
			`no MCP session could be opened: the server exited with status 3 during the handshake; it wrote nothing on stderr`},
		{"secret echoed", `echo "bad token $TOKEN --api-key $TOKEN" >&2; exit 2`, []string{"TOKEN=s3cr3t-value"}, true, ptr(2), "", "bad token REDACTED --api-key REDACTED", ""},
		{"never answers", `echo "waiting for a licence server" >&2; exec sleep 30`, nil, false, nil, "", "waiting for a licence server",
			`no MCP session could be opened: the server wrote nothing within its start-up allowance of 1s and was stopped; its stderr ends "waiting for a licence server"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := mcp.Config{Command: []string{"/bin/sh", "-c", tc.script}, Env: tc.env, RequestTimeout: 300 * time.Millisecond, DiscoverTimeout: 100 * time.Millisecond, StartupTimeout: time.Second}
			r := runScan(t, cfg)
			f := r.StartupFailure
			if r.Established || f == nil {
				t.Fatalf("report %+v", r)
			}
			if f.Exited != tc.exited || f.Signal != tc.signal || f.Said != tc.said || (f.ExitStatus == nil) != (tc.status == nil) ||
				(f.ExitStatus != nil && *f.ExitStatus != *tc.status) {
				t.Fatalf("startup failure %+v (status %v), want exited %v status %v signal %q said %q", f, deref(f.ExitStatus), tc.exited, deref(tc.status), tc.signal, tc.said)
			}
			var msg string
			for _, fd := range r.Findings {
				if fd.Rule == RuleUnreachable {
					msg = fd.Message
				}
			}
			if tc.message != "" && msg != tc.message {
				t.Errorf("finding %q\nwant    %q", msg, tc.message)
			}
			for _, l := range append(r.Meta.Stderr, msg) {
				if strings.Contains(l, "s3cr3t") {
					t.Errorf("secret printed: %q", l)
				}
			}
		})
	}
}

func ptr(i int) *int { return &i }

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// said passes over what explains nothing: stack frames, markers, banners.
func TestSaid(t *testing.T) {
	tests := []struct {
		name string
		tail []string
		want string
	}{
		{"node", []string{
			"/srv/node_modules/x/dist/index.js:12",
			"    throw new Error(\"Cannot find config file settings.json\");",
			"    ^",
			"",
			"Error: Cannot find config file settings.json",
			"    at Object.<anonymous> (/srv/node_modules/x/dist/index.js:12:11)",
			"    at Module._compile (node:internal/modules/cjs/loader:1554:14)",
			"",
			"Node.js v22.14.0",
		}, "Error: Cannot find config file settings.json"},
		{"python", []string{
			"Traceback (most recent call last):",
			"  File \"/srv/server.py\", line 3, in <module>",
			"    raise SystemExit(\"missing API_KEY\")",
			"SystemExit: missing API_KEY",
		}, "SystemExit: missing API_KEY"},
		{"node, error dumped with its fields", []string{
			"Fatal error: Error: connect ECONNREFUSED 127.0.0.1:9",
			"    at async main (file:///srv/dist/index.js:1915:5) {",
			"  errno: -111,",
			"  code: 'ECONNREFUSED',",
			"  port: 9",
			"}",
		}, "Fatal error: Error: connect ECONNREFUSED 127.0.0.1:9"},
		{"a closing brace is passed over", []string{"missing API_KEY", "}"}, "missing API_KEY"},
		{"long", []string{strings.Repeat("é", 150)}, strings.Repeat("é", 100) + "…"},
		{"none", []string{"", "   "}, ""},
	}
	for _, tc := range tests {
		if got := said(tc.tail, nil); got != tc.want {
			t.Errorf("%s: said %q, want %q", tc.name, got, tc.want)
		}
	}
}
