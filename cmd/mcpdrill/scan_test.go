package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// testbedArgs returns the flags and "-- command" that start a testbed
// profile as a real stdio subprocess (this test binary, re-executed).
func testbedArgs(t *testing.T, o testbed.Options) (env string, cmd []string) {
	t.Helper()
	c, err := testbed.ChildCommand(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range c.Env {
		if strings.HasPrefix(kv, testbed.EnvChild+"=") {
			env = kv
		}
	}
	return env, c.Args
}

func TestScanExitCodes(t *testing.T) {
	goodEnv, goodCmd := testbedArgs(t, testbed.Options{Profile: "good"})
	sloppyEnv, sloppyCmd := testbedArgs(t, testbed.Options{Profile: "sloppy-errors"})
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"good passes", append([]string{"scan", "--no-second-connection", "--env", goodEnv, "--"}, goodCmd...), exitOK},
		{"sloppy fails on error", append([]string{"scan", "--no-second-connection", "--env", sloppyEnv, "--"}, sloppyCmd...), exitFindings},
		{"sloppy with fail-on never", append([]string{"scan", "--no-second-connection", "--fail-on", "never", "--env", sloppyEnv, "--"}, sloppyCmd...), exitOK},
		{"good fails on info", append([]string{"scan", "--no-second-connection", "--fail-on", "info", "--env", goodEnv, "--"}, goodCmd...), exitFindings},
		{"no target", []string{"scan"}, exitUsage},
		{"both targets", []string{"scan", "--url", "http://127.0.0.1:1/mcp", "--", "x"}, exitUsage},
		{"bad fail-on", []string{"scan", "--fail-on", "sometimes", "--url", "http://127.0.0.1:1/mcp"}, exitUsage},
		{"bad protocol", []string{"scan", "--protocol", "2023-01-01", "--url", "http://127.0.0.1:1/mcp"}, exitUsage},
		{"unknown flag", []string{"scan", "--frobnicate"}, exitUsage},
		{"header without url", []string{"scan", "--header", "A=b", "--", "x"}, exitUsage},
		{"unset env in header", []string{"scan", "--url", "http://127.0.0.1:1/mcp", "--header", "Authorization=Bearer ${MCPDRILL_SURELY_UNSET}"}, exitUsage},
		{"unreachable", []string{"scan", "--timeout", "1s", "--url", "http://127.0.0.1:1/mcp"}, exitUnreachable},
		{"missing binary", []string{"scan", "--", "/nonexistent/mcp-server"}, exitUnreachable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != tc.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, out, errOut)
			}
		})
	}
}

func TestScanJSONAndNoSecrets(t *testing.T) {
	h, err := testbed.NewHandler(testbed.Options{Profile: "good"})
	if err != nil {
		t.Fatal(err)
	}
	var sawAuth atomic.Bool // the scan sends requests concurrently
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer s3cr3t-v4lue" {
			sawAuth.Store(true)
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	t.Setenv("MCPDRILL_TEST_TOKEN", "s3cr3t-v4lue")
	url := srv.URL + testbed.PathMCP + "?token=query-s3cr3t"
	for _, format := range []string{"--json", "--fail-on=never"} {
		code, out, errOut := runCLI(t, "scan", format, "--fail-on", "never", "--url", url, "--header", "Authorization=Bearer ${MCPDRILL_TEST_TOKEN}")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		for _, secret := range []string{"s3cr3t-v4lue", "query-s3cr3t"} {
			if strings.Contains(out, secret) || strings.Contains(errOut, secret) {
				t.Errorf("%s: output contains a secret value", format)
			}
		}
		if strings.Contains(out, "\x1b[") {
			t.Errorf("%s: colour codes written to a non-terminal", format)
		}
		if format != "--json" {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("JSON output: %v", err)
		}
		for _, key := range []string{"schema_version", "server", "protocol", "tools", "probes", "scores", "findings"} {
			if _, ok := doc[key]; !ok {
				t.Errorf("JSON output lacks %q", key)
			}
		}
		target := doc["target"].(map[string]any)
		if names, _ := target["header_names"].([]any); len(names) != 1 || names[0] != "Authorization" {
			t.Errorf("header names: %v", target["header_names"])
		}
		tools := doc["tools"].([]any)
		for _, tr := range tools {
			c := tr.(map[string]any)["output_contract"]
			switch c {
			case "none", "vacuous", "partial", "enforceable", "invalid":
			default:
				t.Errorf("output_contract %v", c)
			}
		}
	}
	if !sawAuth.Load() {
		t.Error("the header never reached the server")
	}
}

func TestParseHeaders(t *testing.T) {
	env := map[string]string{"TOKEN": "abc", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in      string
		name    string
		value   string
		wantErr bool
	}{
		{"Authorization=Bearer ${TOKEN}", "Authorization", "Bearer abc", false},
		{"x-api-key: $TOKEN", "X-Api-Key", "abc", false},
		{"Accept=a, b", "Accept", "a, b", false},
		{"X-Empty=${EMPTY}", "X-Empty", "", false},
		{"X-A=b=c", "X-A", "b=c", false},
		{"=value", "", "", true},
		{"novalue", "", "", true},
		{"X-Missing=${NOPE}", "", "", true},
		{"Bad Name=x", "", "", true},
	}
	for _, tc := range tests {
		h, err := parseHeaders([]string{tc.in}, lookup)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		if err != nil {
			if strings.Contains(err.Error(), "abc") {
				t.Errorf("%q: error leaks a value: %v", tc.in, err)
			}
			continue
		}
		if got := h.Get(tc.name); got != tc.value {
			t.Errorf("%q: %s = %q, want %q", tc.in, tc.name, got, tc.value)
		}
	}
}

// A stdio server that exits at start-up is one line naming the server, its
// status and quoting its stderr, in every format, and exit 3; the text
// report is that line alone, not a scorecard of zeros.
func TestScanStartupFailureIsOneLine(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the server is a POSIX shell")
	}
	want := `mcpdrill: /bin/sh -c echo 'missing API_KEY' >&2; exit 1: no MCP session could be opened: the server exited with status 1 during the handshake; its stderr ends "missing API_KEY"`
	for _, format := range []string{"table", "json"} {
		code, out, errOut := runCLI(t, "scan", "--format", format, "--", "/bin/sh", "-c", "echo 'missing API_KEY' >&2; exit 1")
		if code != exitUnreachable || strings.TrimSpace(errOut) != want {
			t.Fatalf("%s: exit %d, stderr %q\nwant exit 3 and %q", format, code, errOut, want)
		}
		switch {
		case format == "table" && out != "":
			t.Errorf("table: stdout %q, want nothing but the stderr line", out)
		case format == "json" && !strings.Contains(out, `"startup_failure"`):
			t.Errorf("json: no startup_failure in %s", out)
		}
	}
}
