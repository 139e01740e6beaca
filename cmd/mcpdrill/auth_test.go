package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

const (
	cliSecretToken = "tok-CLI-SECRET-93d1"
	cliSecretKey   = "key-CLI-SECRET-5e02"
)

// bearerServer serves the good testbed profile behind a bearer check with a
// proper challenge and protected-resource metadata.
func bearerServer(t *testing.T) string {
	t.Helper()
	h, err := testbed.NewHandler(testbed.Options{Profile: "good", Reply: "json"})
	if err != nil {
		t.Fatal(err)
	}
	var url string
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":["https://auth.example.com"]}`, url)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+cliSecretToken {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+strings.Replace(url, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1)+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	url = srv.URL + testbed.PathMCP
	return url
}

// TestNoHeaderValueInOutput: header values given with --header (directly
// and through ${ENV}) appear nowhere in the JSON or table output, nor on
// stderr, while their names do.
func TestNoHeaderValueInOutput(t *testing.T) {
	url := bearerServer(t)
	t.Setenv("MCPDRILL_TEST_KEY", cliSecretKey)
	for _, format := range []string{"--json", "--fail-on=never"} {
		code, out, errOut := runCLI(t, "scan", "--url", url, "--no-second-connection", format,
			"--header", "Authorization=Bearer "+cliSecretToken, "--header", "X-Api-Key=${MCPDRILL_TEST_KEY}")
		if code != exitOK && code != exitFindings {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		for _, secret := range []string{cliSecretToken, cliSecretKey} {
			if strings.Contains(out, secret) || strings.Contains(errOut, secret) {
				t.Errorf("%s: header value in the output", format)
			}
		}
		for _, want := range []string{"Authorization", "X-Api-Key", "MCP-AUTH-ENFORCED"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", format, want, out)
			}
		}
	}
}

func TestGateUsageErrors(t *testing.T) {
	url := bearerServer(t)
	tests := [][]string{
		{"scan", "--url", url, "--execute"},
		{"scan", "--url", url, "--target-class", "prod"},
		{"scan", "--url", url, "--invoke-tool", "echo", "--execute", "--target-class", "production"},
		{"scan", "--url", url, "--invoke-tool", "echo", "--execute", "--target-class", "unknown"},
		{"scan", "--url", url, "--otlp-endpoint", "ftp://collector"},
	}
	for _, args := range tests {
		if code, _, errOut := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errOut)
		}
	}
}

// TestCollectorDownWarns: a collector that is down is a warning on stderr;
// the run's exit code is what it would have been without tracing.
func TestCollectorDownWarns(t *testing.T) {
	url := bearerServer(t)
	down := "http://" + testutil.FreeAddr(t)
	args := []string{"scan", "--url", url, "--no-second-connection", "--fail-on", "never", "--header", "Authorization=Bearer " + cliSecretToken}
	code, out, errOut := runCLI(t, append(args, "--otlp-endpoint", down, "--json")...)
	if code != exitOK || !strings.Contains(errOut, "warning:") || !strings.Contains(out, `"trace_id"`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, out, _ = runCLI(t, append(args, "--json")...)
	if code != exitOK || strings.Contains(out, `"trace_id"`) || strings.Contains(out, `"span_id"`) {
		t.Errorf("untraced run: exit %d, ids present %v", code, strings.Contains(out, "span_id"))
	}
}
