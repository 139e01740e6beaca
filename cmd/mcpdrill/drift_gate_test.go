package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// countingTestbed serves the good profile and counts tools/call requests.
func countingTestbed(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	h, err := testbed.NewHandler(testbed.Options{Profile: "good", Reply: "json"})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			if bytes.Contains(b, []byte(`"tools/call"`)) {
				calls.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + testbed.PathMCP, &calls
}

func TestDriftInvokeGate(t *testing.T) {
	url, calls := countingTestbed(t)
	manifest := filepath.Join(t.TempDir(), "m.json")
	doc := `{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string","minLength":1}},"required":["text"]}},` +
		`{"name":"ghost","inputSchema":{"type":"object"}}]}`
	if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	type out struct {
		AuthPosture *struct{ Verdict string } `json:"auth_posture"`
		Invocation  *struct {
			Executed        bool   `json:"executed"`
			ResolvedAgainst string `json:"resolved_against"`
			Seed            uint64 `json:"seed"`
			Calls           []struct{ Tool, Outcome string }
		} `json:"invocation"`
	}
	run := func(args ...string) out {
		t.Helper()
		code, stdout, stderr := runCLI(t, append([]string{"drift", manifest, "--url", url, "--json", "--fail-on", "never"}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var o out
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	o := run("--invoke-tool", "echo", "--invoke-tool", "ghost", "--seed", "5")
	if calls.Load() != 0 {
		t.Fatalf("the plan sent %d tools/call", calls.Load())
	}
	if o.AuthPosture == nil || o.AuthPosture.Verdict != "anonymous" || o.Invocation == nil || o.Invocation.Executed ||
		o.Invocation.ResolvedAgainst != "declared" || o.Invocation.Seed != 5 || len(o.Invocation.Calls) != 2 {
		t.Fatalf("plan %+v %+v", o.AuthPosture, o.Invocation)
	}
	o = run("--invoke-tool", "echo", "--invoke-tool", "ghost", "--execute")
	if calls.Load() != 1 || !o.Invocation.Executed {
		t.Errorf("executed %d call(s): %+v", calls.Load(), o.Invocation)
	}
	for _, c := range o.Invocation.Calls {
		if (c.Tool == "ghost") != (c.Outcome == "unresolved") {
			t.Errorf("%+v", c)
		}
	}
	if code, _, _ := runCLI(t, "drift", manifest, "--url", url, "--execute"); code != exitUsage {
		t.Errorf("--execute alone: exit %d", code)
	}
	code, table, _ := runCLI(t, "drift", manifest, "--url", url, "--invoke-tool", "echo", "--fail-on", "never")
	if code != exitOK || !strings.Contains(table, "plan only, nothing sent") || !strings.Contains(table, "auth posture: anonymous") {
		t.Errorf("table:\n%s", table)
	}
}
