package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// ttyReader is a terminal a person answers on, for requireTrust.
type ttyReader struct{ *strings.Reader }

func (ttyReader) Terminal() bool { return true }

// runCLIWith is runCLI with stdin.
func runCLIWith(t *testing.T, stdin *strings.Reader, tty bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter, app.Reader = &out, &errOut, stdin
	if tty {
		app.Reader = ttyReader{stdin}
	}
	code = execute(app, append([]string{"mcpdrill"}, args...), &errOut)
	return code, out.String(), errOut.String()
}

// TestWorkspaceTrust: a cloned repository's .vscode/mcp.json names a stdio
// command and an HTTP server that would get "Authorization: Bearer
// ${env:GITHUB_TOKEN}". Run from a subdirectory of the repository, `scan
// --config auto` reads neither; named (--config PATH, --workspace DIR) it
// starts nothing and sends nothing until the user says so
// (--trust-workspace, or yes on a terminal). The loopback listener counts
// every request and every token it is sent.
func TestWorkspaceTrust(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the made-up home is laid out as on Linux; the stdio command is sh")
	}
	const token = "ghp_Q7xv2Lm9Rk4Tz8Wp1Ny6Hs3Jd5Fb0Gc"
	h, err := testbed.NewHandler(testbed.Options{Profile: "good"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	requests, tokens := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		if strings.Contains(r.Header.Get("Authorization"), token) {
			tokens++
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	count := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		r, k := requests, tokens
		requests, tokens = 0, 0
		return r, k
	}

	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GITHUB_TOKEN", token)
	repo := filepath.Join(t.TempDir(), "cloned")
	marker := filepath.Join(t.TempDir(), "ran")
	for _, d := range []string{".git", ".vscode", "src/deep"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The stdio server writes the marker and exits: whether it ran is
	// whether the marker exists.
	writeFile(filepath.Join(repo, ".vscode", "mcp.json"), `{"servers": {
		"local":  {"command": "sh", "args": ["-c", "echo ran > `+marker+`"]},
		"remote": {"type": "http", "url": "`+srv.URL+testbed.PathMCP+`", "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"}}
	}}`)
	t.Chdir(filepath.Join(repo, "src", "deep"))
	ranCommand := func() bool {
		_, err := os.Stat(marker)
		os.Remove(marker)
		return err == nil
	}
	scan := []string{"scan", "--json", "--fail-on", "never", "--no-second-connection", "--no-origin-check"}
	named := filepath.Join("..", "..", ".vscode", "mcp.json")

	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		tty   bool
		// code is the exit code (3 once trusted: the stdio "server" only
		// writes the marker); trusted whether the command runs and the
		// token is sent.
		code    int
		trusted bool
		stderr  string
	}{
		{"auto reads no workspace", append(scan, "--config", "auto"), "", false, exitUsage, false, "no MCP client configuration of yours found"},
		{"named, not trusted", append(scan, "--config", named), "", false, exitUsage, false, "pass --trust-workspace"},
		{"auto with --workspace, not trusted", append(scan, "--config", "auto", "--workspace", repo), "", false, exitUsage, false, "pass --trust-workspace"},
		{"one server named, not trusted", append(scan, "--config", named, "--server", "remote"), "", false, exitUsage, false, `would send the values of ${env:GITHUB_TOKEN} to http://127.0.0.1`},
		{"a terminal that says no", append(scan, "--config", named), "n\n", true, exitUsage, false, "Trust it and go on? [y/N]"},
		{"a terminal that says nothing", append(scan, "--config", named), "", true, exitUsage, false, "not trusted"},
		{"not a terminal, yes on stdin", append(scan, "--config", named), "y\n", false, exitUsage, false, "pass --trust-workspace"},
		{"drift, not trusted", []string{"drift", filepath.Join(repo, "tools.json"), "--config", named, "--server", "local"}, "", false, exitUsage, false, `would start: sh -c`},
		{"a terminal that says yes", append(scan, "--config", named), "yes\n", true, exitUnreachable, true, "Trust it and go on?"},
		{"--trust-workspace", append(scan, "--config", named, "--trust-workspace"), "", false, exitUnreachable, true, ""},
		{"auto with --workspace, trusted", append(scan, "--config", "auto", "--workspace", repo, "--trust-workspace"), "", false, exitUnreachable, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLIWith(t, strings.NewReader(tc.stdin), tc.tty, tc.args...)
			ran := ranCommand()
			reqs, toks := count()
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("exit %d, want %d; stderr (want %q):\n%s", code, tc.code, tc.stderr, errOut)
			}
			if !tc.trusted && (ran || reqs > 0 || toks > 0) {
				t.Errorf("untrusted: the command ran: %v; %d request(s) reached the file's URL, %d with the token", ran, reqs, toks)
			}
			if tc.trusted && (!ran || toks == 0) {
				t.Errorf("trusted: the command ran: %v; %d request(s), %d with the token", ran, reqs, toks)
			}
			if strings.Contains(errOut, token) {
				t.Error("stderr shows the token")
			}
		})
	}

	// What needs no trust: an HTTP server whose file holds everything it
	// sends, and the user's own configuration.
	plain := filepath.Join(repo, ".mcp.json")
	writeFile(plain, `{"mcpServers": {"plain": {"type": "http", "url": "`+srv.URL+testbed.PathMCP+`", "headers": {"X-Fixed": "fixed"}}}}`)
	if code, _, errOut := runCLI(t, append(scan, "--config", plain)...); code != exitOK {
		t.Errorf("a plain HTTP server: exit %d: %s", code, errOut)
	}
	if reqs, _ := count(); reqs == 0 {
		t.Error("a plain HTTP server: no request")
	}
	own := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(own), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(own, `{"mcpServers": {"mine": {"command": "sh", "args": ["-c", "echo ran > `+marker+`"]},
		"remote": {"url": "`+srv.URL+testbed.PathMCP+`", "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"}}}}`)
	if code, _, errOut := runCLI(t, append(scan, "--config", "auto")...); code != exitUnreachable {
		t.Errorf("your own configuration: exit %d: %s", code, errOut)
	}
	ran := ranCommand()
	if reqs, toks := count(); !ran || reqs == 0 || toks == 0 {
		t.Errorf("your own configuration: ran %v, %d request(s), %d with the token", ran, reqs, toks)
	}
}
